"""The project's user-facing error: one clear message, no traceback in the CLI."""


class StaticvecError(Exception):
    """An error the user can fix: bad config, missing or corrupt input, malformed file.

    The message names the file (and line, key) and the problem. The CLI prints it
    without a traceback and exits with status 2.
    """


class InputFileError(StaticvecError):
    """A malformed or corrupt input file, located by path and (where known) line."""

    def __init__(self, path, problem, line=None):
        where = f"{path}" if line is None else f"{path}, line {line}"
        super().__init__(f"{where}: {problem}")
        self.path = str(path)
        self.line = line
        self.problem = problem

    def __reduce__(self):  # pickles (a worker process's error reaches its parent as itself)
        return type(self), (self.path, self.problem, self.line)
