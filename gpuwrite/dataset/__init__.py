"""`write_dataset`: a transactional writer of Spark-layout table directories (staging, lock, commit journal,
recovery of what killed jobs left), used with or without Spark."""
