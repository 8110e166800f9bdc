import java.nio.file.Paths;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.column.ParquetProperties.WriterVersion;
import org.apache.parquet.column.page.PageReadStore;
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
 */
public final class RefWriter {
  /** Keys only the conf carries: the zstd level (read by the codec), summary files (none for one file). */
  private static final Set<String> CONF_ONLY = Set.of(
      "parquet.compression.codec.zstd.level", "parquet.summary.metadata.level");

  private RefWriter() {}

  public static void main(String[] args) throws Exception {
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

  /** Sets the builder property that one Hadoop key stands for; an unsupported key is an error. */
  private static void apply(ExampleParquetWriter.Builder builder, String key, String value) {
    String base = key.contains("#") ? key.substring(0, key.indexOf('#')) : key;
    String column = key.contains("#") ? key.substring(key.indexOf('#') + 1) : null;
    if (column != null && !base.equals("parquet.enable.dictionary")) {
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
