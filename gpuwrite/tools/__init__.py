"""Tooling around the library: the `gpuwrite` command (`cli`), its input files (`input_files`, `csv_input`,
`schema_text`), the kernel cache and its warm-up, and `gpuwrite demo` (`demo`, the writers it times gpuwrite
against in `demo_compare`, its generated table in `demo_data`)."""
