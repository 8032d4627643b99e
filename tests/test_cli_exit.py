"""vaultmem/cli/__init__.py: the process leaves as Python would, minus the interpreter's
teardown - threads joined, atexit handlers run, output whole, exit codes kept."""

import subprocess
import sys
import textwrap


def run(body: str, *args: str):
    script = textwrap.dedent("""
        import atexit, sys, threading, time
        from vaultmem.cli import main
        out = sys.argv[1]
        def late():
            time.sleep(0.3)
            open(out, "a").write("thread done\\n")
        threading.Thread(target=late).start()
        atexit.register(lambda: open(out, "a").write("atexit ran\\n"))
    """) + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=120)


def test_a_command_leaves_with_its_code_its_whole_output_and_every_hook_run(tmp_path):
    log = tmp_path / "log"
    # --help prints ~3 KB through click and exits 0; a big print is flushed, not lost.
    done = run("sys.argv = ['vaultmem', '--help']; print('x' * 200_000, end=''); main()", str(log))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("x" * 200_000) and "Usage: vaultmem" in done.stdout
    # The non-daemon thread finished before the process left, then the atexit handler ran.
    assert log.read_text() == "thread done\natexit ran\n"


def test_usage_errors_and_failures_keep_their_exit_codes(tmp_path):
    log = tmp_path / "log"
    usage = run("sys.argv = ['vaultmem', 'no-such-command']; main()", str(log))
    assert usage.returncode == 2 and "No such command" in usage.stderr
    (tmp_path / "none").mkdir()
    failed = run(f"sys.argv = ['vaultmem', '--vault', {str(tmp_path / 'none')!r}, 'show', 'nothing']; main()",
                 str(tmp_path / "log2"))
    assert failed.returncode == 1 and failed.stderr.strip()
    assert log.read_text() == "thread done\natexit ran\n"


def test_a_reader_that_leaves_early_gets_no_traceback(tmp_path):
    """`vaultmem ... | head -1` where the reader has gone before the answer is flushed: the
    command exits 1 without Python's "Exception ignored ... BrokenPipeError"."""
    script = "import sys\nfrom vaultmem.cli import main\nsys.argv = ['vaultmem', '--help']\nmain()"
    writer = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    writer.stdout.close()   # before the child has imported anything, let alone printed
    assert writer.wait(timeout=120) == 1
    errors = writer.stderr.read()
    assert b"Traceback" not in errors and b"Exception ignored" not in errors, errors
