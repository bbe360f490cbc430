"""Atomic writes and byte-exact round trips of encodings and newline styles."""

from __future__ import annotations

import os
import stat

import pytest

from devfix.writing import UnreadableFile, WriteRefused, read_source, write_atomically
from tests.conftest import run_devfix

BUGGY = "import torch\nx = torch.zeros(3).cuda()\n"


def test_write_keeps_permissions(tmp_path):
    target = tmp_path / "script.py"
    target.write_bytes(b"old\n")
    target.chmod(0o751)
    write_atomically(target, b"old\n", b"new\n")
    assert target.read_bytes() == b"new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o751
    assert [p.name for p in tmp_path.iterdir()] == ["script.py"]  # no temporary file left behind


def test_write_refuses_a_file_changed_since_it_was_read(tmp_path):
    target = tmp_path / "script.py"
    target.write_bytes(b"edited by someone else\n")
    with pytest.raises(WriteRefused, match="changed on disk"):
        write_atomically(target, b"what devfix read\n", b"new\n")
    assert target.read_bytes() == b"edited by someone else\n"


def test_write_refuses_symlinks(tmp_path):
    real = tmp_path / "real.py"
    real.write_bytes(b"x\n")
    link = tmp_path / "link.py"
    link.symlink_to(real)
    with pytest.raises(WriteRefused, match="symbolic link"):
        write_atomically(link, b"x\n", b"y\n")
    assert real.read_bytes() == b"x\n"
    assert link.is_symlink()


def test_read_refuses_huge_files(tmp_path):
    big = tmp_path / "big.py"
    big.write_bytes(b"#" * 101)
    with pytest.raises(UnreadableFile, match="over the 100-byte limit"):
        read_source(big, 100)


@pytest.mark.parametrize(
    "source, expected",
    [
        pytest.param(
            BUGGY.replace("\n", "\r\n").encode(),
            (
                'import torch\r\n\r\ndevice = torch.device("cuda" if torch.cuda.is_available() else "cpu")\r\n\r\n'
                "x = torch.zeros(3).to(device)\r\n"
            ).encode(),
            id="crlf",
        ),
        pytest.param(
            b"\xef\xbb\xbf" + BUGGY.encode(),
            b"\xef\xbb\xbf"
            + b'import torch\n\ndevice = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\nx = torch.zeros(3).to(device)\n',
            id="bom",
        ),
        pytest.param(
            "# -*- coding: latin-1 -*-\nimport torch\nname = 'caf\xe9'\nx = torch.zeros(3).cuda()\n".encode("latin-1"),
            (
                "# -*- coding: latin-1 -*-\nimport torch\n\n"
                'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n\n'
                "name = 'caf\xe9'\nx = torch.zeros(3).to(device)\n"
            ).encode("latin-1"),
            id="latin-1-cookie",
        ),
    ],
)
def test_fix_round_trips_encoding_and_newlines_byte_for_byte(source, expected):
    assert run_devfix(source).fixed == expected


def test_mixed_newlines_outside_the_edit_survive():
    source = b"import torch\r\nprint('a')\nx = torch.ones(2).cuda()\r\n"
    fixed = run_devfix(source).fixed
    assert b"print('a')\n" in fixed and b"import torch\r\n" in fixed
    assert fixed.endswith(b"x = torch.ones(2).to(device)\r\n")


def test_written_file_is_complete_even_for_large_content(tmp_path):
    target = tmp_path / "big.py"
    old = b"a = 1\n" * 10000
    target.write_bytes(old)
    write_atomically(target, old, old + b"b = 2\n")
    assert target.read_bytes().endswith(b"b = 2\n")
    assert os.path.getsize(target) == len(old) + 6
