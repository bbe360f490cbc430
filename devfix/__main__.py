from devfix.cli import app

app(prog_name="devfix")
