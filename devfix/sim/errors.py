"""What the simulator raises when it meets something it cannot model faithfully."""


class SimulatorUnsupported(RuntimeError):
    """The program used a CUDA feature the simulator does not model; never counted as a pass."""

    def __init__(self, what: str) -> None:
        super().__init__(f"devfix's simulated CUDA does not support {what}; run this program on a real GPU")
        self.what = what
