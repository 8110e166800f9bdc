"""Write options: the frozen `WriteOptions` model (`model`), the parsers of one value (`values`), pyarrow's
names (`aliases`), Spark's SQL keys (`sql_keys`) and the public writers' keywords (`keywords`)."""
