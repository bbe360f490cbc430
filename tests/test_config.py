"""Configuration as ruff does it: nearest pyproject.toml per file, --config, --isolated, extend-*,
per-file-ignores, and the command line on top."""

from __future__ import annotations

import pytest

from tests.cli_runner import invoke_devfix

TWO_RULES = "import torch\nx = torch.zeros(2).cuda()\ny = x.numpy()\n"  # DF001 on line 2, DF008 on line 3


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(TWO_RULES)
    return tmp_path


def codes(*args: str) -> list[str]:
    result = invoke_devfix(["check", "--output-format", "json", *args])
    assert result.exit_code in (0, 1), result.stderr
    import json

    return [(record["filename"], record["code"]) for record in json.loads(result.stdout)]


def configure(path, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("[tool.devfix]\n" + body)


def test_both_rules_fire_without_configuration(project):
    assert codes("train.py") == [("train.py", "DF001"), ("train.py", "DF008")]


def test_a_nested_project_uses_its_own_settings(project):
    configure(project / "pyproject.toml", 'ignore = ["DF008"]\n')
    configure(project / "sub" / "pyproject.toml", 'ignore = ["DF001"]\n')
    (project / "sub" / "train.py").write_text(TWO_RULES)
    assert codes(".") == [("sub/train.py", "DF008"), ("train.py", "DF001")]


def test_a_nested_project_excludes_its_own_files(project):
    configure(project / "sub" / "pyproject.toml", 'exclude = ["generated/"]\n')
    (project / "sub" / "generated").mkdir()
    (project / "sub" / "generated" / "g.py").write_text(TWO_RULES)
    assert [name for name, _ in codes(".")] == ["train.py", "train.py"]


def test_config_option_applies_one_file_to_every_file(project):
    configure(project / "sub" / "pyproject.toml", 'ignore = ["DF001"]\n')
    (project / "sub" / "train.py").write_text(TWO_RULES)
    (project / "devfix.toml").write_text('ignore = ["DF008"]\n')
    assert codes("--config", "devfix.toml", ".") == [("sub/train.py", "DF001"), ("train.py", "DF001")]


@pytest.mark.parametrize("flag", ["--isolated", "--no-config"])
def test_isolated_ignores_every_configuration_file(project, flag):
    configure(project / "pyproject.toml", 'ignore = ["DF001", "DF008"]\n')
    assert codes("train.py") == []
    assert len(codes(flag, "train.py")) == 2


def test_extend_select_and_extend_ignore_in_the_file(project):
    configure(project / "pyproject.toml", 'select = ["DF001"]\nextend-select = ["DF008"]\n')
    assert len(codes("train.py")) == 2
    configure(project / "pyproject.toml", 'extend-ignore = ["DF008"]\n')
    assert codes("train.py") == [("train.py", "DF001")]


def test_command_line_ignore_adds_to_the_file_and_select_replaces_it(project):
    configure(project / "pyproject.toml", 'ignore = ["DF008"]\n')
    assert codes("--ignore", "DF001", "train.py") == []
    configure(project / "pyproject.toml", 'select = ["DF001"]\n')
    assert codes("--select", "DF008", "train.py") == [("train.py", "DF008")]
    assert len(codes("--extend-select", "DF008", "train.py")) == 2
    assert codes("--isolated", "--ignore", "DF001", "train.py") == [("train.py", "DF008")]


def test_per_file_ignores_by_path_and_by_name(project):
    (project / "tests").mkdir()
    (project / "tests" / "test_a.py").write_text(TWO_RULES)
    configure(project / "pyproject.toml", '[tool.devfix.per-file-ignores]\n"tests/*" = ["DF001"]\n"train.py" = ["DF008"]\n')
    assert codes(".") == [("tests/test_a.py", "DF008"), ("train.py", "DF001")]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('ignnore = ["DF001"]\n', "unknown key(s) in [tool.devfix]: ignnore (did you mean ignore?)"),
        ('unsafe-fixes = "yes"\n', "unsafe-fixes must be true or false"),
        ("jobs = 0\n", "jobs must be a whole number above 0"),
        ('jobs = "many"\n', "jobs must be a whole number above 0"),
        ("max-file-bytes = -1\n", "max-file-bytes must be a whole number above 0"),
        ("max-file-bytes = 'abc'\n", "max-file-bytes must be a whole number above 0"),
        ('exclude = "build"\n', "exclude must be a list of strings"),
        ('per-file-ignores = ["tests/*"]\n', "per-file-ignores must be a table"),
        ('select = ["DF9"]\n', "'DF9' matches no rule code"),
    ],
)
def test_a_bad_configuration_is_a_clear_error(project, body, message):
    configure(project / "pyproject.toml", body)
    result = invoke_devfix(["check", "train.py"])
    assert result.exit_code == 2
    assert message in result.stderr
    assert result.stderr.startswith(f"error: {project / 'pyproject.toml'}: ") or message.startswith("'DF9'")
