"""`gpuwrite.inspect`: a Parquet file or dataset described as JSON-ready data (`file`, `dataset`), decoded
values (`values`) and text for people (`text`)."""
