"""Arrow buffers -> the encoders' arrays: compaction, widening, rebase, value checks and Dremel levels."""
