"""Service units: a systemd user unit or a launchd agent that runs the vault's daemon."""

import json
import plistlib
from pathlib import Path

from click.testing import CliRunner

from vaultmem.cli import cli
from vaultmem.daemon.service import install_service, launchd_plist, service_name, systemd_unit, uninstall_service


def test_systemd_unit_runs_this_python_on_this_vault(tmp_path, monkeypatch):
    vault = tmp_path / "My Notes 100%"
    vault.mkdir()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    unit = systemd_unit(vault, python="/opt/py/bin/python")
    escaped = str(vault).replace("%", "%%")  # systemd expands % specifiers
    assert f'ExecStart="/opt/py/bin/python" "-m" "vaultmem.daemon" "--vault" "{escaped}"' in unit
    assert "WantedBy=default.target" in unit and "Restart=on-failure" in unit

    result = install_service(vault, platform="linux")
    path = Path(result["installed"])
    assert path == tmp_path / "config" / "systemd" / "user" / f"{service_name(vault)}.service"
    assert path.read_text(encoding="utf-8") == systemd_unit(vault)
    assert "systemctl --user enable --now" in result["enable"]
    removed = uninstall_service(vault, platform="linux", manage=False)
    assert removed["removed"] == str(path) and not path.exists()
    assert "disable --now" in removed["disable"]
    assert uninstall_service(vault, platform="linux", manage=False)["removed"] is None


def test_launchd_agent(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    vault = tmp_path / "vault"
    vault.mkdir()
    plist = plistlib.loads(launchd_plist(vault, python="/usr/bin/python3"))
    assert plist["ProgramArguments"] == ["/usr/bin/python3", "-m", "vaultmem.daemon", "--vault",
                                         str(vault)]
    assert plist["RunAtLoad"] is True and plist["Label"].endswith(service_name(vault))
    result = install_service(vault, platform="darwin")
    assert Path(result["installed"]).parent == tmp_path / "home" / "Library" / "LaunchAgents"
    assert result["enable"].startswith("launchctl bootstrap gui/")
    assert uninstall_service(vault, platform="darwin", manage=False)["removed"]


def test_service_names_differ_per_vault(tmp_path):
    assert service_name(tmp_path / "a" / "notes") != service_name(tmp_path / "b" / "notes")
    assert service_name(tmp_path / "a" / "notes").startswith("vaultmem-notes-")


def test_service_cli(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    vault = tmp_path / "vault"
    (vault / ".vaultmem").mkdir(parents=True)
    runner = CliRunner()
    done = runner.invoke(cli, ["--vault", str(vault), "service", "install", "--json"])
    assert done.exit_code == 0, done.output
    installed = Path(json.loads(done.output)["installed"])
    assert installed.is_file()
    done = runner.invoke(cli, ["--vault", str(vault), "service", "uninstall"])
    assert done.exit_code == 0 and f"removed {installed}" in done.output
    assert not installed.exists()
