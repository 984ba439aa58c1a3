"""Stand-in triton for the choice_quality dry run (see ../README.md)."""
