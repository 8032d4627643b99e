"""A login service for the daemon: a systemd user unit (Linux) or a launchd agent (macOS).

    >>> install_service(vault_root)["enable"]         # doctest: +SKIP
    'systemctl --user daemon-reload && systemctl --user enable --now vaultmem-notes-1a2b3c4d.service'

One unit per vault, named after the vault folder plus a hash of its path, running
`python -m vaultmem.daemon --vault <root>` with the interpreter vaultmem is installed in.
Nothing is enabled or started here: the user runs the printed command.
"""

from __future__ import annotations

import hashlib
import os
import plistlib
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from vaultmem.errors import DaemonError
from vaultmem.store.layout import STATE_DIR

LAUNCHD_PREFIX = "com.vaultmem.daemon"


def service_name(vault_root) -> str:
    """`vaultmem-<folder>-<8 hex of the path>`: readable, unique per vault, unit-safe."""
    root = Path(vault_root).resolve()
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", root.name).strip("-.").lower()[:40] or "vault"
    digest = hashlib.sha256(os.fsencode(root)).hexdigest()[:8]
    return f"vaultmem-{slug}-{digest}"


def _platform(platform: str | None) -> str:
    platform = platform or sys.platform
    if platform.startswith("linux"):
        return "systemd"
    if platform == "darwin":
        return "launchd"
    raise DaemonError(f"no service manager support for {platform}; run `vaultmem daemon start` "
                      "from your login scripts instead")


def _command(vault_root, python: str | None) -> list[str]:
    return [python or sys.executable, "-m", "vaultmem.daemon", "--vault",
            str(Path(vault_root).resolve())]


def _systemd_quote(arg: str) -> str:
    # systemd unit syntax: double quotes with C escapes; % and $ are specifiers/variables.
    escaped = arg.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%").replace("$", "$$")
    return f'"{escaped}"'


def systemd_unit(vault_root, python: str | None = None) -> str:
    root = Path(vault_root).resolve()
    exec_start = " ".join(_systemd_quote(a) for a in _command(root, python))
    return (
        "[Unit]\n"
        f"Description=vaultmem daemon for {str(root).replace('%', '%%')}\n"
        "Documentation=https://github.com/vaultmem/vaultmem\n\n"
        "[Service]\n"
        "Type=simple\n"
        f"ExecStart={exec_start}\n"
        f"WorkingDirectory={_systemd_quote(str(root))}\n"
        "Environment=HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1\n"
        "Restart=on-failure\n"
        "RestartSec=5\n"
        # The daemon finishes the write in flight on SIGTERM; give it time.
        "TimeoutStopSec=150\n"
        "Nice=5\n\n"
        "[Install]\n"
        "WantedBy=default.target\n")


def launchd_plist(vault_root, python: str | None = None) -> bytes:
    root = Path(vault_root).resolve()
    label = f"{LAUNCHD_PREFIX}.{service_name(root)}"
    return plistlib.dumps({
        "Label": label,
        "ProgramArguments": _command(root, python),
        "WorkingDirectory": str(root),
        "EnvironmentVariables": {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"},
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "ProcessType": "Background",
        "StandardOutPath": str(root / STATE_DIR / "daemon.out"),
        "StandardErrorPath": str(root / STATE_DIR / "daemon.out"),
    })


def service_file(vault_root, platform: str | None = None) -> Path:
    """Where the unit for this vault lives (honours $XDG_CONFIG_HOME and $HOME)."""
    name = service_name(vault_root)
    if _platform(platform) == "systemd":
        config_home = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
        return Path(config_home) / "systemd" / "user" / f"{name}.service"
    return Path.home() / "Library" / "LaunchAgents" / f"{LAUNCHD_PREFIX}.{name}.plist"


def install_service(vault_root, platform: str | None = None, python: str | None = None) -> dict:
    """Write the unit file; returns its path and the command that enables it."""
    kind = _platform(platform)
    path = service_file(vault_root, platform)
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "systemd":
        path.write_text(systemd_unit(vault_root, python), encoding="utf-8")
        enable = f"systemctl --user daemon-reload && systemctl --user enable --now {path.name}"
    else:
        path.write_bytes(launchd_plist(vault_root, python))
        enable = f"launchctl bootstrap gui/{os.getuid()} {shlex.quote(str(path))}"
    return {"installed": str(path), "manager": kind, "name": path.stem, "enable": enable}


def uninstall_service(vault_root, platform: str | None = None, manage: bool = True) -> dict:
    """Stop and disable the service if the manager is at hand (`manage`), then remove the
    unit file. Returns what was removed and the command to run if the manager was not."""
    kind = _platform(platform)
    path = service_file(vault_root, platform)
    existed = path.exists()
    if kind == "systemd":
        disable = ["systemctl", "--user", "disable", "--now", path.name]
    else:
        disable = ["launchctl", "bootout", f"gui/{os.getuid()}/{path.name[:-len('.plist')]}"]
    stopped = existed and manage and _run_manager(disable)
    if existed:
        path.unlink()
    if stopped and kind == "systemd":
        _run_manager(["systemctl", "--user", "daemon-reload"])
    return {"removed": str(path) if existed else None, "manager": kind, "name": path.stem,
            "stopped": bool(stopped), "disable": None if stopped else shlex.join(disable)}


def _run_manager(argv: list[str]) -> bool:
    """Run a systemctl/launchctl command; False if it is missing or fails (no user bus)."""
    if shutil.which(argv[0]) is None:
        return False
    try:
        done = subprocess.run(argv, capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0
