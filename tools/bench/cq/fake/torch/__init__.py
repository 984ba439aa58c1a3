"""Stand-in torch for the choice_quality dry run (see ../README.md)."""


class cuda:
    class _S:
        cuda_stream = 0

    @staticmethod
    def current_stream():
        return cuda._S()
