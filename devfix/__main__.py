from devfix.cli import app

if __name__ == "__main__":  # the language server's worker process imports this module again
    app(prog_name="devfix")
