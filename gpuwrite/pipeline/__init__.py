"""The write pipeline before the backend, in flow order: `writer` (one file), `window` (rows waiting and the
open row group's window), `validate` (batch checks), `columns` / `leafdata` / `levels` (Arrow -> the
encoders' arrays), `plan` (where pages and row groups end), and the helpers they use (`widen`, `rebase`,
`buffers`, `gcpause`, `progress`, `int96_zones`)."""
