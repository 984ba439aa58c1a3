"""Stand-in numpy for the choice_quality dry run (see ../README.md): the scalar types only."""
int32 = int64 = uint64 = int
float32 = float
