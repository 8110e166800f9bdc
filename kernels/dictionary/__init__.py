"""Dictionaries in first-occurrence order: page by page on the CPU (`by_page`), every column of a row group
at once on the GPU (`row_group_cuda`, twins in `row_group`)."""
