"""Settings: YAML profiles, environment, flags.

Precedence for every setting: command-line flag > environment > profile > default.

The config file is ``$MQCTL_CONFIG``, else ``$XDG_CONFIG_HOME/mqctl/config.yaml``, else
``~/.config/mqctl/config.yaml``. A missing default file is fine; a file named explicitly
(``--config`` or ``MQCTL_CONFIG``) must exist. Example::

    current_profile: prod
    profiles:
      prod:
        namesrv: 10.0.0.1:9876;10.0.0.2:9876
        timeout: 5
        output: table
        tz: Asia/Shanghai     # display zone of human-readable times (default: this machine's)
        tls: {enabled: true, ca_file: /etc/rocketmq/ca.pem}
        acl: {credentials_file: ~/.config/mqctl/prod.credentials.yaml}

Secrets (``secret_key``, ``security_token``) may sit in the profile or in a separate
credentials file; either file being readable by group or others produces a warning.
"""

from __future__ import annotations

import math
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mqctl.errors import ConfigError, TimeParseError, UsageError
from mqctl.fsutil import input_file_error, load_yaml, read_text_capped
from mqctl.remoting.acl import Credentials
from mqctl.remoting.frame import DEFAULT_VERSION
from mqctl.remoting.tls import TlsSettings
from mqctl.timeparse import is_digits, resolve_tz
from mqctl.versions import version_name

DEFAULT_NAMESRV = "127.0.0.1:9876"
DEFAULT_TIMEOUT = 3.0
# the per-request timeout's sane range: inf/nan/1e308 would hang or print "nans"
MIN_TIMEOUT = 0.1
MAX_TIMEOUT = 3600.0
DEFAULT_CONCURRENCY = 16
# a reset moving more messages than this asks for confirmation on a terminal (without --yes);
# profile key confirm_above (mqctl.reset.guards)
DEFAULT_CONFIRM_ABOVE = 10_000
OUTPUT_FORMATS = ("table", "wide", "plain", "json", "yaml", "csv")
REDACTED = "<redacted>"
AUTO_OUTPUT = "auto (table on a terminal, else plain)"

PROFILE_KEYS = {"namesrv", "timeout", "output", "version", "concurrency", "tz", "tls", "acl",
                # reset guards (docs/reset.md): offsets reset/rollback --execute
                "max_replay", "max_skip", "require_guards", "confirm_above"}
TLS_KEYS = {"enabled", "ca_file", "insecure", "verify_hostname", "cert_file", "key_file"}
ACL_KEYS = {"access_key", "secret_key", "security_token", "credentials_file"}


def config_path(explicit: str | None = None,
                env: dict[str, str] | None = None) -> tuple[Path, bool]:
    """The config file path and whether it was named explicitly."""
    env = dict(os.environ) if env is None else env
    if explicit:
        return Path(explicit).expanduser(), True
    if env.get("MQCTL_CONFIG"):
        return Path(env["MQCTL_CONFIG"]).expanduser(), True
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "mqctl" / "config.yaml", False


def _load_yaml(path: Path, what: str) -> Any:
    try:  # (bounded: a FIFO, a device or a file over the cap is refused, docs/errors.md)
        return load_yaml(read_text_capped(path, what), f"{what} {path}",
                         hint="fix the YAML syntax (indentation, colons, quotes)")
    except FileNotFoundError:
        raise ConfigError(f"{what} not found: {path}",
                          hint="create it, or unset MQCTL_CONFIG / drop --config") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {what} {path}: {exc}") from None
    except UsageError as exc:
        raise ConfigError(exc.message, hint=exc.hint) from None


def profile_rows(explicit: str | None = None) -> tuple[list[dict[str, Any]], Path]:
    """The config file's profiles as ``mqctl config profiles`` rows (profile, current,
    namesrv), and the file they were read from."""
    path, is_explicit = config_path(explicit)
    rows: list[dict[str, Any]] = []
    if os.path.exists(path) or is_explicit:
        doc = _load_yaml(path, "config file") or {}
        current = doc.get("current_profile") if isinstance(doc, dict) else None
        for name, prof in ((doc.get("profiles") or {}) if isinstance(doc, dict) else {}).items():
            prof = prof or {}
            ns = prof.get("namesrv", "") if isinstance(prof, dict) else ""
            rows.append({"profile": name, "current": name == current,
                         "namesrv": ";".join(ns) if isinstance(ns, list) else ns})
    return rows, path


def _loose_permissions(path: Path) -> bool:
    try:
        return bool(path.stat().st_mode & (stat.S_IRWXG | stat.S_IRWXO))
    except OSError:
        return False


@dataclass(frozen=True)
class Settings:
    namesrv: tuple[str, ...] = (DEFAULT_NAMESRV,)
    profile: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    output: str | None = None
    version: int = DEFAULT_VERSION
    concurrency: int = DEFAULT_CONCURRENCY
    tz: str | None = None  # display zone name as given (None: this machine's)
    tls: TlsSettings = TlsSettings()
    credentials: Credentials | None = None
    config_file: str | None = None
    sources: dict[str, str] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    # reset guards from the profile (flags override them in `offsets reset/rollback`)
    max_replay: int | None = None
    max_skip: int | None = None
    require_guards: bool = False
    confirm_above: int | None = None

    def client_options(self) -> Any:
        from mqctl.remoting.client import ClientOptions

        if self.tls.enabled:  # OpenSSL reads these whole: a device or FIFO would never end
            for what, f in (("TLS CA file", self.tls.ca_file),
                            ("TLS certificate", self.tls.cert_file),
                            ("TLS key file", self.tls.key_file)):
                err = input_file_error(f, what, "TLS file") if f else None
                if err is not None:
                    raise ConfigError(err.message, hint=err.hint)
        return ClientOptions(timeout=self.timeout, version=self.version,
                             credentials=self.credentials, tls=self.tls)

    def redacted(self) -> list[dict[str, Any]]:
        """Rows for ``mqctl config show``: every setting, its value (typed: numbers, booleans,
        null for unset), where it came from and a note (the output format chosen at run time,
        the request version's RocketMQ name, a CA file that does not exist)."""
        c = self.credentials
        ca = self.tls.ca_file
        rows: list[tuple[str, Any, str, str]] = [
            ("profile", self.profile, "profile", ""),
            ("config_file", self.config_file, "config_file", ""),
            ("namesrv", ";".join(self.namesrv), "namesrv", ""),
            ("timeout", self.timeout, "timeout", ""),
            ("output", self.output or "auto", "output", "" if self.output else AUTO_OUTPUT),
            ("version", self.version, "version",
             f"{version_name(self.version)}: the RocketMQ version requests announce"),
            ("concurrency", self.concurrency, "concurrency", ""),
            ("tz", self.tz or "local", "tz",
             "" if self.tz else "this machine's time zone"),
            ("tls.enabled", self.tls.enabled, "tls.enabled", ""),
            ("tls.ca_file", ca, "tls.ca_file",
             "FILE NOT FOUND" if ca and not Path(ca).is_file() else ""),
            ("tls.insecure", self.tls.insecure, "tls.insecure", ""),
            ("acl.access_key", c.access_key if c else None, "acl.access_key", ""),
            ("acl.secret_key", REDACTED if c else None, "acl.secret_key", ""),
            ("acl.security_token", REDACTED if c and c.security_token else None,
             "acl.security_token", ""),
            ("max_replay", self.max_replay, "max_replay",
             "" if self.max_replay is not None else "no limit"),
            ("max_skip", self.max_skip, "max_skip",
             "" if self.max_skip is not None else "no limit"),
            ("require_guards", self.require_guards, "require_guards", ""),
            ("confirm_above", self.confirm_above if self.confirm_above is not None
             else DEFAULT_CONFIRM_ABOVE, "confirm_above",
             "offsets reset/rollback --execute asks first above this many messages"),
        ]
        return [{"setting": k, "value": v, "source": self.sources.get(src, "default"),
                 "note": note} for k, v, src, note in rows]


def _truthy(v: str) -> bool:
    return v.strip().lower() in ("1", "true", "yes", "on")


def _split_namesrv(v: Any, where: str) -> tuple[str, ...]:
    if isinstance(v, list):
        parts = [str(x).strip() for x in v]
    elif isinstance(v, str):
        parts = [p.strip() for p in v.replace(",", ";").split(";")]
    else:
        raise ConfigError(f"{where}: namesrv must be a string or a list, not {type(v).__name__}")
    parts = [p for p in parts if p]
    if not parts:
        raise ConfigError(f"{where}: namesrv is empty", hint="e.g. 127.0.0.1:9876")
    for p in parts:
        scheme, sep, rest = p.partition("://")
        if sep:
            raise ConfigError(f"{where}: bad name server address {p!r}: drop the scheme "
                              f"({scheme}://)",
                              hint=f"the name server speaks RocketMQ remoting, not HTTP: give "
                                   f"host:port, e.g. -n {rest.rstrip('/') or '127.0.0.1:9876'}")
        host, sep, port = p.rpartition(":")
        if not sep or not host or not is_digits(port) or not 0 < int(port) < 65536:
            raise ConfigError(f"{where}: bad name server address {p!r}",
                              hint="use host:port, several separated by ';'")
    return tuple(parts)


def _num(v: Any, where: str, kind: type, minimum: float) -> Any:
    try:
        if isinstance(v, str) and not v.isascii():
            raise ValueError(v)  # ('٣', which float() and int() take; inf: the range says)
        n = kind(v)
    except (TypeError, ValueError, OverflowError):
        raise ConfigError(f"{where}: {v!r} is not a number",
                          hint="give a plain number (seconds for timeouts)") from None
    if n < minimum:
        raise ConfigError(f"{where}: must be at least {minimum}",
                          hint=f"give a number >= {minimum}")
    return n


# environment variables whose empty value is an error, not "unset" (NAMESRV_ADDR='' would
# silently fall back to 127.0.0.1:9876); MQCTL_NAMESRV is read before NAMESRV_ADDR
_EMPTY_IS_ERROR = ("MQCTL_NAMESRV", "NAMESRV_ADDR")


def _tz(v: Any, where: str) -> str:
    """A display zone name, checked (``local``, ``UTC``, ``+08:00``, an IANA name)."""
    try:
        resolve_tz(str(v))
    except TimeParseError as exc:
        raise ConfigError(f"{where}: {exc.message}", hint=exc.hint) from None
    return str(v).strip()


def _timeout(v: Any, where: str) -> float:
    """A per-request timeout in seconds: finite and within MIN_TIMEOUT..MAX_TIMEOUT."""
    n = float(_num(v, where, float, -math.inf))
    if not math.isfinite(n) or not MIN_TIMEOUT <= n <= MAX_TIMEOUT:
        raise ConfigError(f"{where}: {v!r} is out of range ({MIN_TIMEOUT:g} to "
                          f"{MAX_TIMEOUT:g} seconds)",
                          hint="give the per-request timeout in seconds as a plain number, "
                               "e.g. --timeout 5 (MQCTL_TIMEOUT=5, profile timeout: 5)")
    return n


def load_settings(*, config_file: str | None = None, profile: str | None = None,
                  flags: dict[str, Any] | None = None,
                  env: dict[str, str] | None = None) -> Settings:
    """Resolve settings with precedence flag > env > profile > default.

    In order (the first error found is the one reported): the config file, the profile, every
    value of the profile (checked even where a flag or the environment overrides it), then
    each setting from its source, TLS and the ACL credentials."""
    env = dict(os.environ) if env is None else env
    flags = {k: v for k, v in (flags or {}).items() if v is not None}
    sources: dict[str, str] = {}
    warnings: list[str] = []

    path, explicit = config_path(config_file, env)
    doc = _config_doc(path, explicit)
    prof_name = profile or env.get("MQCTL_PROFILE") or doc.get("current_profile")
    prof = _profile(doc, prof_name, path)
    psrc = f"profile {prof_name}" if prof_name else "profile"
    _check_profile_values(prof, psrc)
    out_guard = _profile_guards(prof, psrc, sources)
    _check_profile_display(prof, psrc)
    where = _Sources(flags, env, prof, psrc)
    out = _scalar_settings(where, sources)
    tls = _tls_settings(_section(prof, "tls", TLS_KEYS, psrc), where, sources)
    if tls is not None:
        out["tls"] = tls
    creds = _credentials(_section(prof, "acl", ACL_KEYS, psrc), where, path, sources, warnings)
    if creds is not None:
        out["credentials"] = creds

    if prof_name:
        sources["profile"] = ("flag" if profile else
                              "env MQCTL_PROFILE" if env.get("MQCTL_PROFILE") else
                              "config current_profile")
    if path.exists():
        sources["config_file"] = "flag" if config_file else (
            "env MQCTL_CONFIG" if explicit else "default location")
    return Settings(profile=prof_name, config_file=str(path) if path.exists() else None,
                    sources=sources, warnings=tuple(warnings), **out, **out_guard)


def _config_doc(path: Path, explicit: bool) -> dict[Any, Any]:
    """The config file's mapping ({} when there is no file at the default location)."""
    doc: Any = None
    if path.exists() or explicit:
        doc = _load_yaml(path, "config file")
        if doc is None:
            doc = {}
        if not isinstance(doc, dict):
            raise ConfigError(f"config file {path} must be a mapping with 'profiles'",
                          hint="see docs/config.md (settings and profiles)")
    doc = doc or {}
    top = set(doc) - {"profiles", "current_profile"}
    if top:
        raise ConfigError(f"config file {path}: unknown top-level key(s) "
                          f"{', '.join(sorted(map(str, top)))}",
                          hint="the file has 'current_profile' and 'profiles' (settings go "
                               "inside a profile)")
    return doc


def _profile(doc: dict[Any, Any], prof_name: Any, path: Path) -> dict[str, Any]:
    """The named profile's settings ({} with no profile), its keys checked."""
    profiles = doc.get("profiles") or {}
    if not isinstance(profiles, dict):
        raise ConfigError(f"config file {path}: 'profiles' must be a mapping of name -> settings",
                          hint="profiles:\n  prod: {namesrv: host:9876}")
    if not prof_name:
        return {}
    if prof_name not in profiles:
        known = ", ".join(sorted(map(str, profiles))) or "none defined"
        raise ConfigError(f"unknown profile {prof_name!r} (known: {known})",
                          hint=f"add it under 'profiles:' in {path}")
    prof = profiles[prof_name] or {}
    if not isinstance(prof, dict):
        raise ConfigError(f"profile {prof_name!r} in {path} must be a mapping")
    unknown = set(prof) - PROFILE_KEYS
    if unknown:
        raise ConfigError(f"profile {prof_name!r}: unknown setting(s) "
                          f"{', '.join(sorted(map(str, unknown)))}",
                          hint=f"known settings: {', '.join(sorted(PROFILE_KEYS))}")
    return prof


def _check_profile_values(prof: dict[str, Any], psrc: str) -> None:
    """A bad profile value is an error even where a flag or the environment overrides it."""
    if prof.get("namesrv") is not None:
        _split_namesrv(prof["namesrv"], psrc)
    if prof.get("timeout") is not None:
        _timeout(prof["timeout"], f"timeout ({psrc})")
    for key, kind, minimum in (("version", int, 0), ("concurrency", int, 1)):
        if prof.get(key) is not None:
            _num(prof[key], f"{key} ({psrc})", kind, minimum)


def _profile_guards(prof: dict[str, Any], psrc: str, sources: dict[str, str]) -> dict[str, Any]:
    """The reset guards of the profile (max_replay, max_skip, confirm_above: messages;
    require_guards); flags override them in ``offsets reset/rollback``."""
    out_guard: dict[str, Any] = {}
    for key in ("max_replay", "max_skip", "confirm_above"):  # reset guards: messages
        if prof.get(key) is not None:
            if isinstance(prof[key], bool) or not isinstance(prof[key], int):
                raise ConfigError(f"{key} ({psrc}): {prof[key]!r} is not a whole number",
                                  hint=f"a number of messages, e.g. {key}: 100000")
            out_guard[key] = int(_num(prof[key], f"{key} ({psrc})", int, 0))
            sources[key] = psrc
    if prof.get("require_guards") is not None:
        if not isinstance(prof["require_guards"], bool):
            raise ConfigError(f"require_guards ({psrc}): {prof['require_guards']!r} is not "
                              "true or false")
        out_guard["require_guards"] = prof["require_guards"]
        sources["require_guards"] = psrc
    return out_guard


def _check_profile_display(prof: dict[str, Any], psrc: str) -> None:
    """The profile's output format and display zone, checked like its other values."""
    if prof.get("output") is not None:
        _output(prof["output"], psrc)
    if prof.get("tz") is not None:
        _tz(prof["tz"], f"tz ({psrc})")


def _output(v: Any, src: str) -> str:
    fmt = str(v).lower()
    if fmt not in OUTPUT_FORMATS:
        raise ConfigError(f"output ({src}): {v!r} is not one of {', '.join(OUTPUT_FORMATS)}")
    return fmt


@dataclass(frozen=True)
class _Sources:
    """Where one setting's value comes from: flag > env > profile."""

    flags: dict[str, Any]
    env: dict[str, str]
    prof: dict[str, Any]
    psrc: str

    def pick(self, key: str, env_keys: tuple[str, ...]) -> tuple[Any, str] | None:
        """(value, source) of the first that sets ``key``, or None."""
        if key in self.flags:
            return self.flags[key], "flag"
        for ek in env_keys:
            if ek in _EMPTY_IS_ERROR and ek in self.env and not self.env[ek].strip():
                raise ConfigError(f"{ek} is set but empty",
                                  hint=f"unset it (unset {ek}) or give host:port, e.g. "
                                       f"{ek}=127.0.0.1:9876")
            if self.env.get(ek):
                return self.env[ek], f"env {ek}"
        if key in self.prof and self.prof[key] is not None:
            return self.prof[key], self.psrc
        return None


# the one-value settings: (key = flag key = profile key, environment variables, checker)
_SCALARS: tuple[tuple[str, tuple[str, ...], Any], ...] = (
    ("namesrv", ("MQCTL_NAMESRV", "NAMESRV_ADDR"), _split_namesrv),
    ("tz", ("MQCTL_TZ",), lambda v, src: _tz(v, f"tz ({src})")),
    ("timeout", ("MQCTL_TIMEOUT",), lambda v, src: _timeout(v, f"timeout ({src})")),
    ("output", ("MQCTL_OUTPUT",), _output),
    ("version", ("MQCTL_VERSION",), lambda v, src: int(_num(v, f"version ({src})", int, 0))),
    ("concurrency", ("MQCTL_CONCURRENCY",),
     lambda v, src: int(_num(v, f"concurrency ({src})", int, 1))),
)


def _scalar_settings(where: _Sources, sources: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, env_keys, check in _SCALARS:
        got = where.pick(key, env_keys)
        if got:
            out[key] = check(got[0], got[1])
            sources[key] = got[1]
    return out


def _section(prof: dict[str, Any], name: str, keys: set[str], psrc: str) -> dict[str, Any]:
    """The profile's ``tls:`` or ``acl:`` mapping, its keys checked."""
    sec = prof.get(name) or {}
    if not isinstance(sec, dict):
        raise ConfigError(f"{psrc}: {name} must be a mapping")
    if set(sec) - keys:
        raise ConfigError(f"{psrc}: unknown {name} setting(s) {sorted(set(sec) - keys)}",
                          hint=f"known: {', '.join(sorted(keys))}")
    return sec


def _tls_settings(ptls: dict[str, Any], where: _Sources,
                  sources: dict[str, str]) -> TlsSettings | None:
    """TLS from the profile, then the environment, then flags (None: nothing set)."""
    tls_kw, field_src = _tls_fields(ptls, where.psrc, where.env, where.flags)
    if not tls_kw:
        return None
    for b in ("enabled", "insecure", "verify_hostname"):
        if b in tls_kw:
            tls_kw[b] = bool(tls_kw[b])
    if tls_kw.get("ca_file"):
        tls_kw["ca_file"] = str(Path(str(tls_kw["ca_file"])).expanduser())
    sources.update(field_src)
    return TlsSettings(**tls_kw)


def _tls_fields(ptls: dict[str, Any], psrc: str, env: dict[str, str], flags: dict[str, Any]
                ) -> tuple[dict[str, Any], dict[str, str]]:
    """The TLS fields as set (the last source wins) and where each came from."""
    tls_kw: dict[str, Any] = {k: ptls[k] for k in TLS_KEYS if k in ptls}
    # where each field came from (config show): the last source read is not every field's
    field_src: dict[str, str] = {f"tls.{k}": psrc for k in ptls}
    for key, ek, conv in (("enabled", "MQCTL_TLS", _truthy), ("ca_file", "MQCTL_TLS_CA", str),
                          ("insecure", "MQCTL_TLS_INSECURE", _truthy)):
        if env.get(ek):
            tls_kw[key] = conv(env[ek])
            field_src[f"tls.{key}"] = f"env {ek}"
    for key, fk in (("enabled", "tls"), ("ca_file", "tls_ca"), ("insecure", "tls_insecure")):
        if fk in flags and flags[fk] not in (None, False):
            tls_kw[key] = flags[fk]
            field_src[f"tls.{key}"] = "flag"
    if tls_kw.get("ca_file") or tls_kw.get("insecure"):
        if "enabled" not in tls_kw:  # implied by the CA file or insecure, from their source
            tls_kw["enabled"] = True
            field_src["tls.enabled"] = field_src.get("tls.ca_file" if tls_kw.get("ca_file")
                                                     else "tls.insecure", psrc)
    return tls_kw, field_src


def _credentials(pacl: dict[str, Any], where: _Sources, path: Path, sources: dict[str, str],
                 warnings: list[str]) -> Credentials | None:
    """ACL credentials from the credentials file, the profile, the environment, then the
    access key flag (a secret never comes from a flag). None: none set."""
    psrc, env, flags = where.psrc, where.env, where.flags
    acl: dict[str, Any] = {}
    acl_src: dict[str, str] = {}  # per field
    if pacl.get("credentials_file"):
        _credentials_file(pacl["credentials_file"], psrc, acl, acl_src, warnings)
    for k in ("access_key", "secret_key", "security_token"):
        if pacl.get(k):
            acl[k], acl_src[k] = pacl[k], psrc
    if pacl.get("secret_key") and _loose_permissions(path):
        warnings.append(f"config file {path} holds a secret key and is readable by group or "
                        f"others; run: chmod 600 {path}")
    for k, ek in (("access_key", "MQCTL_ACCESS_KEY"), ("secret_key", "MQCTL_SECRET_KEY"),
                  ("security_token", "MQCTL_SECURITY_TOKEN")):
        if env.get(ek):
            acl[k], acl_src[k] = env[ek], f"env {ek}"
    if flags.get("access_key"):
        acl["access_key"], acl_src["access_key"] = flags["access_key"], "flag"
    if not acl:
        return None
    if not acl.get("access_key") or not acl.get("secret_key"):
        missing = "access_key" if not acl.get("access_key") else "secret_key"
        raise ConfigError(f"ACL credentials are incomplete: {missing} is missing",
                          hint="set both access_key and secret_key (profile acl:, "
                               "credentials_file, or MQCTL_ACCESS_KEY/MQCTL_SECRET_KEY)")
    sources.update({f"acl.{k}": v for k, v in acl_src.items()})
    return Credentials(str(acl["access_key"]), str(acl["secret_key"]),
                       str(acl["security_token"]) if acl.get("security_token") else None)


def _credentials_file(name: Any, psrc: str, acl: dict[str, Any], acl_src: dict[str, str],
                      warnings: list[str]) -> None:
    """The keys of a profile's ``acl.credentials_file`` into ``acl``."""
    cpath = Path(str(name)).expanduser()
    cdoc = _load_yaml(cpath, "credentials file")
    if not isinstance(cdoc, dict):
        raise ConfigError(f"credentials file {cpath} must be a mapping with access_key and "
                          "secret_key")
    if _loose_permissions(cpath):
        warnings.append(f"credentials file {cpath} is readable by group or others; "
                        f"run: chmod 600 {cpath}")
    for k in ("access_key", "secret_key", "security_token"):
        if cdoc.get(k):
            acl[k], acl_src[k] = cdoc[k], f"{psrc} ({cpath})"
