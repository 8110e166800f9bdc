import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.column.ParquetProperties.WriterVersion;
import org.apache.parquet.column.page.PageReadStore;
import org.apache.parquet.column.values.bloomfilter.AdaptiveBlockSplitBloomFilter;
import org.apache.parquet.column.values.bloomfilter.BlockSplitBloomFilter;
import org.apache.parquet.column.values.bloomfilter.BloomFilter;
import org.apache.parquet.column.values.bloomfilter.XxHash;
import org.apache.parquet.example.data.Group;
import org.apache.parquet.example.data.simple.convert.GroupRecordConverter;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.ParquetFileWriter;
import org.apache.parquet.hadoop.ParquetWriter;
import org.apache.parquet.hadoop.example.ExampleParquetWriter;
import org.apache.parquet.hadoop.metadata.CompressionCodecName;
import org.apache.parquet.hadoop.metadata.FileMetaData;
import org.apache.parquet.io.ColumnIOFactory;
import org.apache.parquet.io.LocalInputFile;
import org.apache.parquet.io.LocalOutputFile;
import org.apache.parquet.io.MessageColumnIO;
import org.apache.parquet.io.RecordReader;
import org.apache.parquet.schema.MessageType;

/**
 * Reference writer for gpuwrite's parity tests: re-writes every record of a Parquet file with
 * parquet-java's ExampleParquetWriter (PARQUET_2_0 pages), keeping the input's schema and key/value
 * metadata. Usage: RefWriter IN OUT [key=value ...] with the parquet.* keys gpuwrite accepts.
 * Unset keys take Spark's defaults (SNAPPY codec, parquet-java's sizes).
 *
 * <p>{@code RefWriter --bloom} instead answers bloom filter probes read from stdin, one per line, each
 * answered by one stdout line starting with "= " (see {@link #probe}).
 */
public final class RefWriter {
  /** Keys only the conf carries: the zstd level (read by the codec), summary files (none for one file). */
  private static final Set<String> CONF_ONLY = Set.of(
      "parquet.compression.codec.zstd.level", "parquet.summary.metadata.level");
  /** Keys with a per-column form ({@code key#column.path}), as ParquetOutputFormat parses them. */
  private static final Set<String> PER_COLUMN = Set.of(
      "parquet.enable.dictionary", "parquet.bloom.filter.enabled", "parquet.bloom.filter.expected.ndv",
      "parquet.bloom.filter.fpp", "parquet.bloom.filter.candidates.number");

  private RefWriter() {}

  public static void main(String[] args) throws Exception {
    if (args.length == 1 && args[0].equals("--bloom")) {
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      StringBuilder out = new StringBuilder();
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        if (!line.isBlank()) {
          out.append("= ").append(probe(line.trim().split(" "))).append('\n');
        }
      }
      System.out.print(out);
      System.out.flush();
      return;
    }
    if (args.length < 2) {
      System.err.println("usage: RefWriter IN OUT [key=value ...]");
      System.exit(2);
    }
    Map<String, String> options = new LinkedHashMap<>();
    Configuration conf = new Configuration(false);
    for (int i = 2; i < args.length; i++) {
      int eq = args[i].indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException("option is not key=value: " + args[i]);
      }
      options.put(args[i].substring(0, eq), args[i].substring(eq + 1));
      conf.set(args[i].substring(0, eq), args[i].substring(eq + 1));
    }
    try (ParquetFileReader reader = ParquetFileReader.open(new LocalInputFile(Paths.get(args[0])))) {
      FileMetaData meta = reader.getFooter().getFileMetaData();
      MessageType schema = meta.getSchema();
      Map<String, String> extra = new LinkedHashMap<>(meta.getKeyValueMetaData());
      extra.remove("writer.model.name");  // ParquetWriter sets this key itself and refuses a copy
      ExampleParquetWriter.Builder builder = ExampleParquetWriter.builder(new LocalOutputFile(Paths.get(args[1])))
          .withType(schema)
          .withExtraMetaData(extra)
          .withConf(conf)
          .withWriteMode(ParquetFileWriter.Mode.OVERWRITE)
          .withWriterVersion(WriterVersion.PARQUET_2_0)
          .withCompressionCodec(CompressionCodecName.SNAPPY);
      for (Map.Entry<String, String> option : options.entrySet()) {
        apply(builder, option.getKey(), option.getValue());
      }
      MessageColumnIO columnIO = new ColumnIOFactory().getColumnIO(schema);
      try (ParquetWriter<Group> writer = builder.build()) {
        PageReadStore rowGroup;
        while ((rowGroup = reader.readNextRowGroup()) != null) {
          RecordReader<Group> records = columnIO.getRecordReader(rowGroup, new GroupRecordConverter(schema));
          for (long row = 0; row < rowGroup.getRowCount(); row++) {
            writer.write(records.read());
          }
        }
      }
    }
  }

  /**
   * One bloom filter probe, answered with parquet-java's own classes. Hashes and bits are unsigned hex.
   * <ul>
   * <li>{@code bytes HEX}: XxHash.hashBytes of the bytes ("-" for none);
   * <li>{@code int V}, {@code long V}, {@code float BITS}, {@code double BITS}: BlockSplitBloomFilter.hash;
   * <li>{@code bits N P}: optimalNumOfBits(N, P);
   * <li>{@code filter NUMBYTES MAXBYTES H,H,...}: bitset (hex) of new BlockSplitBloomFilter(NUMBYTES,
   *     MAXBYTES) after insertHash of each hash ("-" for none);
   * <li>{@code adaptive MAXBYTES CANDIDATES FPP H,H,...}: the bitset AdaptiveBlockSplitBloomFilter writes;
   * <li>{@code ndvsize NDV FPP MAXBYTES}: bitset bytes ColumnValueCollector allocates for an expected NDV.
   * </ul>
   */
  private static String probe(String[] p) throws Exception {
    BlockSplitBloomFilter plain = new BlockSplitBloomFilter(32);
    switch (p[0]) {
      case "bytes" -> {
        return Long.toUnsignedString(new XxHash().hashBytes(p[1].equals("-") ? new byte[0] : hex(p[1])), 16);
      }
      case "int" -> {
        return Long.toUnsignedString(plain.hash(Integer.parseInt(p[1])), 16);
      }
      case "long" -> {
        return Long.toUnsignedString(plain.hash(Long.parseLong(p[1])), 16);
      }
      case "float" -> {
        return Long.toUnsignedString(plain.hash(Float.intBitsToFloat(Integer.parseUnsignedInt(p[1], 16))), 16);
      }
      case "double" -> {
        return Long.toUnsignedString(plain.hash(Double.longBitsToDouble(Long.parseUnsignedLong(p[1], 16))), 16);
      }
      case "bits" -> {
        return Integer.toString(BlockSplitBloomFilter.optimalNumOfBits(Long.parseLong(p[1]), Double.parseDouble(p[2])));
      }
      case "filter" -> {
        return bitset(new BlockSplitBloomFilter(Integer.parseInt(p[1]), Integer.parseInt(p[2])), p[3]);
      }
      case "adaptive" -> {
        return bitset(new AdaptiveBlockSplitBloomFilter(Integer.parseInt(p[1]), Integer.parseInt(p[2]),
            Double.parseDouble(p[3]), null), p[4]);
      }
      case "ndvsize" -> {
        int bits = BlockSplitBloomFilter.optimalNumOfBits(Long.parseLong(p[1]), Double.parseDouble(p[2]));
        return Integer.toString(new BlockSplitBloomFilter(bits / 8, Integer.parseInt(p[3])).getBitsetSize());
      }
      default -> throw new IllegalArgumentException("unknown probe " + p[0]);
    }
  }

  /** Inserts comma-separated unsigned hex hashes, then returns the bitset the filter writes, as hex. */
  private static String bitset(BloomFilter filter, String hashes) throws Exception {
    if (!hashes.equals("-")) {
      for (String h : hashes.split(",")) {
        filter.insertHash(Long.parseUnsignedLong(h, 16));
      }
    }
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    filter.writeTo(bytes);
    StringBuilder out = new StringBuilder();
    for (byte b : bytes.toByteArray()) {
      out.append(String.format("%02x", b & 0xff));
    }
    return out.toString();
  }

  private static byte[] hex(String text) {
    byte[] out = new byte[text.length() / 2];
    for (int i = 0; i < out.length; i++) {
      out[i] = (byte) Integer.parseInt(text.substring(2 * i, 2 * i + 2), 16);
    }
    return out;
  }

  /** Sets the builder property that one Hadoop key stands for; an unsupported key is an error. */
  private static void apply(ExampleParquetWriter.Builder builder, String key, String value) {
    String base = key.contains("#") ? key.substring(0, key.indexOf('#')) : key;
    String column = key.contains("#") ? key.substring(key.indexOf('#') + 1) : null;
    if (column != null && !PER_COLUMN.contains(base)) {
      throw new IllegalArgumentException("per-column form not supported for " + key);
    }
    switch (base) {
      case "parquet.compression" -> builder.withCompressionCodec(codec(value));
      case "parquet.block.size" -> builder.withRowGroupSize(Long.parseLong(value));
      case "parquet.block.row.count.limit" -> builder.withRowGroupRowCountLimit(Integer.parseInt(value));
      case "parquet.page.size" -> builder.withPageSize(Integer.parseInt(value));
      case "parquet.dictionary.page.size" -> builder.withDictionaryPageSize(Integer.parseInt(value));
      case "parquet.enable.dictionary" -> {
        if (column == null) {
          builder.withDictionaryEncoding(bool(key, value));
        } else {
          builder.withDictionaryEncoding(column, bool(key, value));
        }
      }
      case "parquet.bloom.filter.enabled" -> {
        if (column == null) {
          builder.withBloomFilterEnabled(bool(key, value));
        } else {
          builder.withBloomFilterEnabled(column, bool(key, value));
        }
      }
      case "parquet.bloom.filter.expected.ndv" -> builder.withBloomFilterNDV(needColumn(key, column),
          Long.parseLong(value.trim()));
      case "parquet.bloom.filter.fpp" -> builder.withBloomFilterFPP(needColumn(key, column),
          Double.parseDouble(value.trim()));
      case "parquet.bloom.filter.candidates.number" -> builder.withBloomFilterCandidateNumber(
          needColumn(key, column), Integer.parseInt(value.trim()));
      case "parquet.bloom.filter.max.bytes" -> builder.withMaxBloomFilterBytes(Integer.parseInt(value.trim()));
      case "parquet.bloom.filter.adaptive.enabled" -> builder.withAdaptiveBloomFilterEnabled(bool(key, value));
      case "parquet.page.row.count.limit" -> builder.withPageRowCountLimit(Integer.parseInt(value));
      case "parquet.page.size.row.check.min" -> builder.withMinRowCountForPageSizeCheck(Integer.parseInt(value));
      case "parquet.page.size.row.check.max" -> builder.withMaxRowCountForPageSizeCheck(Integer.parseInt(value));
      case "parquet.page.write-checksum.enabled" -> builder.withPageWriteChecksumEnabled(bool(key, value));
      case "parquet.statistics.truncate.length" -> builder.withStatisticsTruncateLength(Integer.parseInt(value));
      case "parquet.columnindex.truncate.length" -> builder.withColumnIndexTruncateLength(Integer.parseInt(value));
      case "parquet.writer.version" -> {
        if (!value.equalsIgnoreCase("v2") && !value.equalsIgnoreCase("PARQUET_2_0")) {
          throw new IllegalArgumentException("RefWriter writes PARQUET_2_0 pages only, got " + key + "=" + value);
        }
      }
      default -> {
        if (!CONF_ONLY.contains(base)) {
          throw new IllegalArgumentException("RefWriter cannot apply option " + key);
        }
      }
    }
  }

  /** The column of a per-column-only key (ParquetOutputFormat reads these keys only with a #column suffix). */
  private static String needColumn(String key, String column) {
    if (column == null) {
      throw new IllegalArgumentException(key + " is read per column only (key#column.path)");
    }
    return column;
  }

  /** Spark's codec names (none, lz4raw, ...) as parquet-java's enum. */
  private static CompressionCodecName codec(String value) {
    String name = value.trim().toUpperCase(Locale.ROOT);
    return switch (name) {
      case "NONE" -> CompressionCodecName.UNCOMPRESSED;
      case "LZ4RAW" -> CompressionCodecName.LZ4_RAW;
      default -> CompressionCodecName.valueOf(name);
    };
  }

  /** A Hadoop boolean: exactly true or false, any case. */
  private static boolean bool(String key, String value) {
    String text = value.trim().toLowerCase(Locale.ROOT);
    if (!text.equals("true") && !text.equals("false")) {
      throw new IllegalArgumentException(key + " must be true or false, got " + value);
    }
    return text.equals("true");
  }
}
