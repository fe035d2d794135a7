"""Settings precedence, profiles, credentials and their errors."""

from __future__ import annotations

import os

import pytest

from mqctl.config import load_settings
from mqctl.errors import ConfigError


def write(path, text, mode=0o600):
    path.write_text(text)
    os.chmod(path, mode)
    return path


@pytest.fixture
def cfg(tmp_path):
    creds = write(tmp_path / "prod.credentials.yaml",
                  "access_key: ops\nsecret_key: SUPERSECRET-1\n")
    return write(tmp_path / "config.yaml", f"""
current_profile: prod
profiles:
  prod:
    namesrv: 10.0.0.1:9876;10.0.0.2:9876
    timeout: 7
    output: json
    acl: {{credentials_file: {creds}}}
  dev:
    namesrv: [127.0.0.1:9876]
    tls: {{enabled: true, insecure: true}}
""")


def test_defaults_without_any_file(tmp_path):
    s = load_settings(env={"XDG_CONFIG_HOME": str(tmp_path)})
    assert s.namesrv == ("127.0.0.1:9876",) and s.timeout == 3.0 and s.credentials is None
    assert s.sources == {}


def test_profile_values(cfg):
    s = load_settings(config_file=str(cfg), env={})
    assert s.profile == "prod" and s.namesrv == ("10.0.0.1:9876", "10.0.0.2:9876")
    assert s.timeout == 7.0 and s.output == "json"
    assert s.credentials.access_key == "ops" and s.credentials.secret_key == "SUPERSECRET-1"
    assert s.sources["namesrv"] == "profile prod"


def test_precedence_flag_over_env_over_profile(cfg):
    env = {"NAMESRV_ADDR": "10.9.9.9:9876", "MQCTL_TIMEOUT": "4"}
    s = load_settings(config_file=str(cfg), env=env)
    assert s.namesrv == ("10.9.9.9:9876",) and s.sources["namesrv"] == "env NAMESRV_ADDR"
    assert s.timeout == 4.0
    s = load_settings(config_file=str(cfg), env=env, flags={"namesrv": "1.2.3.4:1"})
    assert s.namesrv == ("1.2.3.4:1",) and s.sources["namesrv"] == "flag"


def test_profile_selection_env_and_flag(cfg):
    s = load_settings(config_file=str(cfg), env={"MQCTL_PROFILE": "dev"})
    assert s.profile == "dev" and s.tls.enabled and s.tls.insecure
    s = load_settings(config_file=str(cfg), profile="dev", env={"MQCTL_PROFILE": "prod"})
    assert s.profile == "dev"


def test_redacted_rows_hide_secrets(cfg):
    rows = load_settings(config_file=str(cfg), env={}).redacted()
    text = repr(rows)
    assert "SUPERSECRET" not in text
    assert {"setting": "acl.secret_key", "value": "<redacted>",
            "source": f"profile prod ({cfg.parent / 'prod.credentials.yaml'})",
            "note": ""} in rows


def test_loose_credentials_file_warns(cfg, tmp_path):
    os.chmod(tmp_path / "prod.credentials.yaml", 0o644)
    s = load_settings(config_file=str(cfg), env={})
    assert any("readable by group or others" in w for w in s.warnings)
    os.chmod(tmp_path / "prod.credentials.yaml", 0o600)
    assert load_settings(config_file=str(cfg), env={}).warnings == ()


def test_secret_in_loose_config_warns(tmp_path):
    p = write(tmp_path / "c.yaml", "profiles: {p: {acl: {access_key: a, secret_key: b}}}\n",
              0o644)
    s = load_settings(config_file=str(p), profile="p", env={})
    assert any("holds a secret key" in w for w in s.warnings)


@pytest.mark.parametrize("text, fragment", [
    ("profiles: [1, 2]", "'profiles' must be a mapping"),
    ("profiles:\n  p: {namesrv: 'nohost'}\ncurrent_profile: p", "bad name server address"),
    ("profiles:\n  p: {timeout: abc}\ncurrent_profile: p", "is not a number"),
    ("profiles:\n  p: {output: xml}\ncurrent_profile: p", "not one of"),
    ("profiles:\n  p: {colour: red}\ncurrent_profile: p", "unknown setting(s) colour"),
    ("profiles:\n  p: {acl: {access_key: a}}\ncurrent_profile: p", "secret_key is missing"),
    ("current_profile: nope\nprofiles: {p: {}}", "unknown profile 'nope'"),
    ("profiles:\n  p: {namesrv: [a\n", "not valid YAML at line"),
    ("- 1\n- 2\n", "must be a mapping"),
])
def test_bad_config_files(tmp_path, text, fragment):
    p = write(tmp_path / "c.yaml", text)
    with pytest.raises(ConfigError) as ei:
        load_settings(config_file=str(p), env={})
    assert fragment in ei.value.message


def test_explicit_missing_config_file(tmp_path):
    with pytest.raises(ConfigError, match="config file not found"):
        load_settings(env={"MQCTL_CONFIG": str(tmp_path / "nope.yaml")})


def test_env_credentials_and_tls(tmp_path):
    s = load_settings(env={"XDG_CONFIG_HOME": str(tmp_path), "MQCTL_ACCESS_KEY": "a",
                           "MQCTL_SECRET_KEY": "b", "MQCTL_TLS_INSECURE": "1"})
    assert s.credentials.access_key == "a" and s.tls.enabled and s.tls.insecure
