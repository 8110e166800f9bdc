"""Host assembly: finished pages -> column chunks -> row groups -> file with footer, written atomically."""
