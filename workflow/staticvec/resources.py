"""External inputs: the registry, mirror lookup, downloads with retries, checksum verification.

The registry (``config/resources.yaml``) lists every external input as a group of member
files with their sha256, URL(s) and licence. Fetching a member:

1. look for it in the local mirror (``resources.mirror``), also under a compressed name
   (``wiki_00.xz`` for ``wiki_00``): air-gapped cluster nodes and CI run this way;
2. otherwise download it from its URL(s) with retries (resuming a partial ``.part`` file);
3. verify its checksum (of the uncompressed content where the registry says so) and place
   it under ``resources.download_dir`` — a symbolic link to the mirror copy, or the
   downloaded file — atomically.

A file whose checksum does not match is reported as corrupt or truncated, naming the file;
inputs that cannot be found are reported together, each with where to put it.
"""

from __future__ import annotations

import fnmatch
import hashlib
import http.client
import logging
import os
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from staticvec.errors import StaticvecError
from staticvec.files import atomic_path, open_any, write_json

log = logging.getLogger(__name__)

COMPRESSED_SUFFIXES = ("", ".xz", ".gz", ".bz2")
REGISTRY_KEYS = {
    "description", "path", "members", "checksums", "prefix", "checksum_of", "checksum_list",
    "url", "fetch", "size", "licence", "manual",
}


class ResourceError(StaticvecError):
    pass


class MissingResourcesError(ResourceError):
    pass


@dataclass
class Member:
    group: str
    name: str  # path relative to the group's path
    rel_path: str  # path relative to the data root (mirror / download dir)
    sha256: str | None
    urls: list[str]
    checksum_of: str  # "file" or "content"
    checksum_list: dict | None = None
    manual: str | None = None


@dataclass
class Group:
    id: str
    path: str
    fetch: str
    description: str = ""
    licence: str = ""
    members: dict[str, Member] = field(default_factory=dict)


class Registry:
    def __init__(self, groups: dict[str, Group], source: str = "registry"):
        self.groups = groups
        self.source = source

    @classmethod
    def load(cls, path: str | os.PathLike, root: str | os.PathLike | None = None) -> "Registry":
        """Read the registry; checksum files are resolved relative to ``root`` (repo root)."""
        from staticvec.yaml_files import YamlFileError, load_yaml

        root = Path(root) if root else Path.cwd()
        if not Path(path).exists():
            raise ResourceError(f"{path}: resource registry not found")
        try:
            data = load_yaml(path) or {}
        except YamlFileError as exc:
            raise ResourceError(str(exc)) from None
        groups = {}
        for gid, spec in data.items():
            unknown = set(spec) - REGISTRY_KEYS
            if unknown:
                raise ResourceError(f"{path}: entry '{gid}' has unknown keys {sorted(unknown)}; allowed: {sorted(REGISTRY_KEYS)}")
            if "path" not in spec:
                raise ResourceError(f"{path}: entry '{gid}' needs a 'path'")
            groups[gid] = _build_group(gid, spec, root, path)
        return cls(groups, str(path))

    def group(self, gid: str) -> Group:
        try:
            return self.groups[gid]
        except KeyError:
            raise ResourceError(f"{self.source}: no resource '{gid}'; known: {', '.join(sorted(self.groups))}") from None

    def select(self, gid: str, patterns: list[str] | None = None) -> list[Member]:
        """Members of a group matching any glob pattern (in registry order); all if no patterns."""
        members = list(self.group(gid).members.values())
        if not patterns:
            return members
        chosen = [m for m in members if any(fnmatch.fnmatchcase(m.name, p) for p in patterns)]
        unmatched = [p for p in patterns if not any(fnmatch.fnmatchcase(m.name, p) for m in members)]
        if unmatched:
            raise ResourceError(f"{self.source}: patterns {unmatched} match no member of '{gid}'")
        return chosen

    def describe(self, gid: str | None = None) -> list[str]:
        """One line per entry (all, or only ``gid`` with a line per member), as ``staticvec resources list`` prints."""
        lines = []
        for key, group in self.groups.items():
            if gid and key != gid:
                continue
            lines.append(f"{key}: {len(group.members)} file(s) under {group.path} — {group.description} [{group.licence}]")
            if gid:
                lines += [f"  {m.name}  {m.sha256 or '(sha from list)'}  {m.urls[0] if m.urls else '(manual)'}"
                          for m in group.members.values()]
        return lines


def _build_group(gid: str, spec: dict, root: Path, registry_path) -> Group:
    group = Group(gid, spec["path"].rstrip("/"), spec.get("fetch", "group"), spec.get("description", ""), spec.get("licence", ""))
    checksum_of = spec.get("checksum_of", "file")
    url = spec.get("url")
    manual = spec.get("manual") or {}
    entries: dict[str, dict] = {}
    if spec.get("checksums"):
        prefix = spec.get("prefix", group.path + "/")
        with open(root / spec["checksums"], encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, start=1):
                digest, sep, rel = line.rstrip("\n").partition("  ")
                if not sep or len(digest) != 64:
                    raise ResourceError(f"{spec['checksums']}, line {lineno}: expected 'sha256  path'")
                if rel.startswith(prefix):
                    entries[_relative(rel, group.path)] = {"sha256": digest}
    for name, member_spec in (spec.get("members") or {}).items():
        entries[name] = dict(member_spec or {})
    for name, info in entries.items():
        note = manual.get(name) or manual.get("*")
        # a member with a manual note of its own has no download (the group's URL template would name a file its
        # source does not have), unless the member names its own URL
        urls = info.get("url", None if name in manual else url)
        urls = [] if urls is None else ([urls] if isinstance(urls, str) else list(urls))
        group.members[name] = Member(
            group=gid,
            name=name,
            rel_path=f"{group.path}/{name}",
            sha256=info.get("sha256"),
            urls=[u.format(member=name) for u in urls],
            checksum_of=checksum_of,
            checksum_list=spec.get("checksum_list"),
            manual=note,
        )
    if not group.members:
        raise ResourceError(f"{registry_path}: entry '{gid}' has no members")
    return group


def _relative(rel: str, group_path: str) -> str:
    return rel[len(group_path) + 1 :] if rel.startswith(group_path + "/") else rel


# ---------------------------------------------------------------- locating and verifying


def find_in_mirror(member: Member, mirror: str | os.PathLike | None) -> Path | None:
    if not mirror:
        return None
    for suffix in COMPRESSED_SUFFIXES:
        candidate = Path(mirror) / (member.rel_path + suffix)
        if candidate.is_file():
            return candidate
    return None


def target_path(member: Member, download_dir: str | os.PathLike) -> Path:
    return Path(download_dir) / member.rel_path


def digest_of(path: Path, algorithm: str, content: bool) -> str:
    digest = hashlib.new(algorithm)
    try:
        with (open_any(path, "rb") if content else open(path, "rb")) as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    except (EOFError, OSError) as exc:
        raise ResourceError(f"{path}: corrupt or truncated compressed file ({exc})") from None
    return digest.hexdigest()


def verify(member: Member, path: Path, expected: tuple[str, str] | None = None, name: Path | None = None) -> None:
    """Raise ResourceError naming the file (``name``, default ``path``) if its checksum does not match."""
    algorithm, want = expected or ("sha256", member.sha256)
    if not want:
        log.warning("%s: no checksum in the registry; not verified", path)
        return
    got = digest_of(path, algorithm, content=(member.checksum_of == "content"))
    if got != want:
        raise ResourceError(
            f"{name or path}: {algorithm} mismatch for resource {member.group}/{member.name} "
            f"(expected {want}, got {got}): the file is corrupt, truncated or a different version; "
            f"delete it and fetch again{' from ' + member.urls[0] if member.urls else ''}"
        )


def _expected_from_list(member: Member, retries: int) -> tuple[str, str] | None:
    """(algorithm, digest) from a published checksum list (e.g. a Wikipedia dump's sha1sums)."""
    spec = member.checksum_list
    if not spec:
        return None
    urls = spec["url"] if isinstance(spec["url"], list) else [spec["url"]]
    text = _download_bytes(urls, retries).decode("utf-8", "replace")
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].lstrip("*") == Path(member.name).name:
            return spec.get("algorithm", "sha1"), parts[0]
    raise ResourceError(f"{urls[0]}: no checksum listed for {member.name}")


# ---------------------------------------------------------------- fetching


def fetch(member: Member, mirror, download_dir, allow_download: bool = True, retries: int = 3) -> Path:
    """Make ``member`` available, verified, under ``download_dir``; return its path."""
    target = target_path(member, download_dir)
    source = find_in_mirror(member, mirror)
    if source is None and _placed_by_hand(target):  # a file the start-up check told the user to put here
        verify(member, target)
        log.info("%s: verified %s", member.rel_path, target)
        return target
    if source is not None:
        verify(member, source)
        _link(source.resolve(), target)
        log.info("%s: verified mirror copy %s", member.rel_path, source)
        return target
    if not allow_download or not member.urls:
        raise MissingResourcesError(missing_message([member], mirror, download_dir))
    expected = _expected_from_list(member, retries)
    with atomic_path(target) as tmp:
        _download(member.urls, tmp, retries, partial=Path(f"{target}.part"))
        verify(member, tmp, expected, name=target)
    log.info("%s: downloaded and verified", member.rel_path)
    return target


def fetch_group(gid: str, registry: Registry, mirror, download_dir, allow_download=True, retries=3, marker=None) -> list[Path]:
    """Fetch every member of a group; list all missing ones in one error."""
    members = registry.select(gid)
    missing = [m for m in members if find_in_mirror(m, mirror) is None and not _placed_by_hand(target_path(m, download_dir))
               and not (allow_download and m.urls)]
    if missing:
        raise MissingResourcesError(missing_message(missing, mirror, download_dir))
    paths = [fetch(m, mirror, download_dir, allow_download, retries) for m in members]
    if marker:
        write_json(marker, {"group": gid, "members": {m.name: m.sha256 for m in members}})
    return paths


def _link(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.link.tmp")
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    os.symlink(source, tmp)
    os.replace(tmp, target)


def _download(urls: list[str], dest: Path, retries: int, partial: Path) -> None:
    """Download to ``dest`` trying each URL with retries; resume a ``.part`` file if present."""
    last_error = None
    for url in urls:
        for attempt in range(retries + 1):
            try:
                _download_once(url, partial)
                os.replace(partial, dest)
                return
            except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
                last_error = exc
                wait = min(60, 2**attempt)
                if attempt < retries:
                    log.warning("download %s failed (%s); retry %d of %d in %ds", url, exc, attempt + 1, retries, wait)
                    time.sleep(wait)
                else:
                    log.warning("download %s failed (%s); no retries left", url, exc)
    raise ResourceError(f"could not download {urls[0]} (and {len(urls) - 1} mirror URL(s)): {last_error}")


def _download_once(url: str, partial: Path) -> None:
    have = partial.stat().st_size if partial.exists() else 0
    request = urllib.request.Request(url, headers={"User-Agent": "staticvec"})
    if have:
        request.add_header("Range", f"bytes={have}-")
    with urllib.request.urlopen(request, timeout=60) as response:
        resumed = bool(have) and response.status == 206
        length = response.headers.get("Content-Length")
        expected = None if length is None else int(length) + (have if resumed else 0)
        with open(partial, "ab" if resumed else "wb") as out:
            for block in iter(lambda: response.read(1 << 20), b""):
                out.write(block)
    size = partial.stat().st_size
    if expected is not None and size != expected:
        raise OSError(f"connection closed after {size} of {expected} bytes")


def _download_bytes(urls: list[str], retries: int) -> bytes:
    last_error = None
    for url in urls:
        for attempt in range(retries + 1):
            try:
                with urllib.request.urlopen(url, timeout=60) as response:
                    return response.read()
            except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
                last_error = exc
                if attempt < retries:
                    time.sleep(min(60, 2**attempt))
    raise ResourceError(f"could not download {urls[0]}: {last_error}")


def _placed_by_hand(target: Path) -> bool:
    """A regular file under the download directory (not a link to a mirror copy, which fetch re-links)."""
    return target.is_file() and not target.is_symlink()


def missing_message(members: list[Member], mirror, download_dir) -> str:
    """One line per missing file, or per group of files that share how to obtain them (WordNet's 18 files: one
    line), each with where to put it: under the mirror when it exists, else under the download directory."""
    mirror_exists = bool(mirror) and Path(mirror).is_dir()
    root = Path(mirror) if mirror_exists else Path(download_dir)
    lines = [f"{len(members)} input file(s) are missing (not in the mirror, and not downloadable here):"]
    shared: dict[tuple[str, str], list[Member]] = {}
    for m in members:
        if m.manual and not m.urls:
            shared.setdefault((m.group, m.manual), []).append(m)
            continue
        how = f"; source: {m.urls[0]}" if m.urls else (f"; obtain it: {m.manual}" if m.manual else "")
        lines.append(f"  - {m.group}/{m.name}: put it at {root / m.rel_path}{how}")
    for (group, note), files in shared.items():
        if len(files) == 1:
            lines.append(f"  - {group}/{files[0].name}: put it at {root / files[0].rel_path}; obtain it: {note}")
            continue
        folder = Path(os.path.commonpath([m.rel_path for m in files]))
        names = ", ".join(m.name for m in files)
        lines.append(f"  - {group}, {len(files)} files ({names}): put them under {root / folder}/; obtain them: {note}")
    if mirror and not mirror_exists:
        lines.append(f"  (resources.mirror = {mirror} does not exist here: put the files under resources.download_dir as "
                     "above, or point resources.mirror at a directory holding a copy of the data)")
    elif not mirror:
        lines.append("  (set resources.mirror to a directory holding these files, or resources.allow_download: true)")
    return "\n".join(lines)


def check_available(members: list[Member], mirror, download_dir, allow_download: bool) -> None:
    """Raise one error listing every member that can be neither found nor downloaded."""
    missing = [
        m for m in members
        if not target_path(m, download_dir).exists()
        and find_in_mirror(m, mirror) is None
        and not (allow_download and m.urls)
    ]
    if missing:
        raise MissingResourcesError(missing_message(missing, mirror, download_dir))

