"""``python -m jungleseg.cli`` is the ``jungleseg`` command."""
import subprocess
import sys

from jungleseg._version import __version__


def test_python_m_runs_the_command_line():
    proc = subprocess.run([sys.executable, "-m", "jungleseg.cli", "--version"],
                          capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.strip() == f"jungleseg {__version__}"
