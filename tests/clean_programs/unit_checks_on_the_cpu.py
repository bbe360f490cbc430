"""Unit tests of a small geometry library, run on the CPU: every tensor they compare is made on
the host, so the expected values need no device (`device=scales.device` would change nothing)."""
import unittest

import torch


def pairwise_scales(charges, cutoff):
    scales = torch.outer(charges, charges)
    return torch.where(scales.abs() > cutoff, scales, torch.zeros_like(scales))


def centre(coords):
    return coords - coords.mean(dim=0, keepdim=True)


def _check_close(actual, rows):
    return torch.allclose(actual, torch.tensor(rows))


class TestScales(unittest.TestCase):
    def test_pairwise_scales(self):
        charges = torch.tensor([1.0, -0.5, 0.25])
        scales = pairwise_scales(charges, 0.2)
        expected = torch.tensor([[1.0, -0.5, 0.25], [-0.5, 0.25, 0.0], [0.25, 0.0, 0.0]])
        self.assertTrue(torch.allclose(scales, expected))

    def test_centre(self):
        coords = torch.arange(6.0).reshape(3, 2)
        centred = centre(coords)
        self.assertTrue(torch.equal(centred, torch.tensor([[-2.0, -2.0], [0.0, 0.0], [2.0, 2.0]])))
        self.assertTrue(_check_close(centred.sum(0), [0.0, 0.0]))


if __name__ == "__main__":
    outcome = unittest.main(argv=["checks"], exit=False, verbosity=0).result
    print("RESULT", float(outcome.testsRun - len(outcome.failures) - len(outcome.errors)))
