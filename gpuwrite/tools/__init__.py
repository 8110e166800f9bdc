"""Tooling around the library: the `gpuwrite` command (`cli`), its input files (`input_files`, `csv_input`,
`schema_text`), the kernel cache and its warm-up, and the demo's generated table."""
