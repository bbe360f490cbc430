from vision.model import Classifier

__all__ = ["Classifier"]
