"""The files API of a session's workspace, through both clients and their session handles,
against the real daemon: writes and reads (whole and in part), listings, deletes, tar
uploads (and the ones refused, which write nothing), snapshots, and paths that try to leave
the workspace.

Every session works in ``tmp_path / "workspace"``, so a path that escaped would land in
``tmp_path``, where the tests look for it.
"""

from __future__ import annotations

import gzip
import io
import os
import tarfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from sandbox_daemon import (
    AsyncClient,
    Client,
    FileArchive,
    LocalDaemon,
    ProblemError,
    ResponseError,
    Session,
)
from sandbox_daemon import _operations as ops
from sandbox_daemon.files import range_header, skipped_paths
from sandbox_daemon.models import FileKind

from .conftest import FAST_RETRY
from .recording import AsyncRecordingTransport, RecordingTransport, operation_of

PROBLEM = "urn:sandbox-daemon:problem:"


def slug(problem: ProblemError) -> str:
    """The last part of a problem's type (``invalid-path``)."""
    assert problem.type.startswith(PROBLEM), problem.type
    return problem.type.removeprefix(PROBLEM)


@dataclass
class Sent:
    method: str
    operation: str
    content_type: str | None
    range: str | None


class SpyTransport(RecordingTransport):
    """A recording transport that also notes the headers each request went with."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[Sent] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        headers = request.headers
        self.sent.append(
            Sent(
                request.method,
                operation_of(request),
                headers.get("content-type"),
                headers.get("range"),
            )
        )
        return super().handle_request(request)

    def content_types(self, operation: str) -> list[str | None]:
        return [s.content_type for s in self.sent if s.operation == operation]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    return path


@pytest.fixture
def spy() -> SpyTransport:
    return SpyTransport()


@pytest.fixture
def session(daemon: LocalDaemon, spy: SpyTransport, workspace: Path) -> Iterator[Session]:
    with (
        Client(daemon.base_url, token=daemon.token, transport=spy, retry=FAST_RETRY) as client,
        client.start_session("mock", cwd=str(workspace)) as started,
    ):
        yield started


def tar_of(
    files: dict[str, bytes],
    *,
    directories: tuple[str, ...] = (),
    symlinks: dict[str, str] | None = None,
    compress: bool = False,
) -> bytes:
    """A tar (or tar.gz) archive built with :mod:`tarfile`, entries in the order given:
    directories, then files, then symlinks.
    """
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz" if compress else "w") as archive:
        for name in directories:
            entry = tarfile.TarInfo(name)
            entry.type, entry.mode = tarfile.DIRTYPE, 0o755
            archive.addfile(entry)
        for name, data in files.items():
            entry = tarfile.TarInfo(name)
            entry.size, entry.mode = len(data), 0o644
            archive.addfile(entry, io.BytesIO(data))
        for name, target in (symlinks or {}).items():
            entry = tarfile.TarInfo(name)
            entry.type, entry.linkname = tarfile.SYMTYPE, target
            archive.addfile(entry)
    return buffer.getvalue()


def tree(root: Path) -> list[str]:
    """Every path under ``root``, relative, sorted (symlinks listed, not followed)."""
    found = []
    for directory, subdirectories, files in os.walk(root):
        for name in [*subdirectories, *files]:
            found.append(str((Path(directory) / name).relative_to(root)))
    return sorted(found)


# --- write and read -------------------------------------------------------------------


def test_write_creates_then_replaces_and_read_answers_the_bytes(
    session: Session, spy: SpyTransport, workspace: Path
) -> None:
    created = session.write_file("notes/today.txt", b"first draft")
    assert (created.path, created.name, created.kind) == ("notes/today.txt", "today.txt", "file")
    assert created.kind is FileKind.file and created.size == len(b"first draft")
    assert created.modified_at.tzinfo is not None and created.target is None
    assert (workspace / "notes" / "today.txt").read_bytes() == b"first draft"

    replaced = session.write_file("notes/today.txt", "second draft, é")  # text: UTF-8
    assert replaced.size == len("second draft, é".encode())
    assert spy.statuses("writeFile") == [201, 200]  # created, then replaced
    assert session.read_file("notes/today.txt") == "second draft, é".encode()

    every_byte = bytes(range(256)) * 3
    session.write_file("blob.bin", io.BytesIO(every_byte))  # a binary file object
    assert session.read_file("blob.bin") == every_byte
    assert (workspace / "blob.bin").read_bytes() == every_byte
    session.write_file("empty", b"")
    assert session.read_file("empty") == b""

    # The body is the bytes, as application/octet-stream: never JSON.
    assert set(spy.content_types("writeFile")) == {"application/octet-stream"}
    assert spy.statuses("readFile") == [200, 200, 200]


def test_write_replacing_a_file_keeps_its_permission_bits(
    session: Session, workspace: Path
) -> None:
    script = workspace / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o750)
    entry = session.write_file("run.sh", "#!/bin/sh\necho hi\n")
    assert entry.mode == 0o750 == script.stat().st_mode & 0o777


def test_read_a_range(session: Session, spy: SpyTransport) -> None:
    session.write_file("digits.txt", b"0123456789")
    assert session.read_file("digits.txt", range=(2, 5)) == b"2345"  # both ends included
    assert session.read_file("digits.txt", range=(7, None)) == b"789"  # to the end
    assert session.read_file("digits.txt", range="bytes=-3") == b"789"  # the last 3
    assert session.read_file("digits.txt", range=(8, 100)) == b"89"  # cut at the end
    assert spy.statuses("readFile") == [206, 206, 206, 206]
    assert [s.range for s in spy.sent if s.operation == "readFile"] == [
        "bytes=2-5",
        "bytes=7-",
        "bytes=-3",
        "bytes=8-100",
    ]

    with pytest.raises(ProblemError) as past_the_end:
        session.read_file("digits.txt", range=(10, None))
    assert (past_the_end.value.status, slug(past_the_end.value)) == (416, "range-not-satisfiable")
    assert past_the_end.value.headers["content-range"] == "bytes */10"

    # A range this side can tell is wrong is not sent.
    sent = len(spy.sent)
    for wrong in ((5, 2), (-1, 3)):
        with pytest.raises(ValueError, match="byte range"):
            session.read_file("digits.txt", range=wrong)
    assert len(spy.sent) == sent


def test_reading_what_is_not_a_file(session: Session, workspace: Path) -> None:
    (workspace / "dir").mkdir()
    with pytest.raises(ProblemError) as directory:
        session.read_file("dir")
    assert (directory.value.status, slug(directory.value)) == (409, "wrong-file-kind")
    with pytest.raises(ProblemError) as missing:
        session.read_file("nothing-here.txt")
    assert (missing.value.status, slug(missing.value)) == (404, "file-not-found")
    with pytest.raises(ProblemError) as onto_a_directory:
        session.write_file("dir", b"x")
    assert (onto_a_directory.value.status, slug(onto_a_directory.value)) == (
        409,
        "wrong-file-kind",
    )
    assert (workspace / "dir").is_dir()


# --- list ------------------------------------------------------------------------------


def test_list_one_and_two_levels_down(session: Session, workspace: Path) -> None:
    for name, data in {"a/b/c.txt": b"c", "a/d.txt": b"dd", "e.txt": b"eee"}.items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_bytes(data)
    (workspace / "link").symlink_to("e.txt")

    top = session.list_files()
    assert (top.path, top.depth, top.truncated) == ("", 1, False)
    assert [(e.path, e.kind) for e in top.entries] == [
        ("a", FileKind.directory),
        ("e.txt", FileKind.file),
        ("link", FileKind.symlink),
    ]
    by_path = {e.path: e for e in top.entries}
    assert by_path["e.txt"].size == 3
    assert by_path["link"].target == "e.txt"  # listed as itself, not followed

    # Depth first: each directory followed by its own entries, in name order.
    two = session.list_files(depth=2)
    assert two.depth == 2
    assert [e.path for e in two.entries] == ["a", "a/b", "a/d.txt", "e.txt", "link"]
    below = session.list_files("a", depth=2)
    assert below.path == "a"
    assert [(e.path, e.name) for e in below.entries] == [
        ("a/b", "b"),
        ("a/b/c.txt", "c.txt"),
        ("a/d.txt", "d.txt"),
    ]

    with pytest.raises(ProblemError) as a_file:
        session.list_files("e.txt")
    assert (a_file.value.status, slug(a_file.value)) == (409, "wrong-file-kind")
    with pytest.raises(ProblemError) as too_deep:
        session.list_files(depth=33)
    assert too_deep.value.status == 400


# --- delete ----------------------------------------------------------------------------


def test_delete_files_links_and_directories(
    session: Session, spy: SpyTransport, workspace: Path
) -> None:
    session.write_file("build/out/app.js", b"x")
    session.write_file("build/app.map", b"y")
    (workspace / "empty").mkdir()
    (workspace / "to-app").symlink_to("build/out/app.js")

    with pytest.raises(ProblemError) as not_empty:
        session.delete_file("build")
    assert (not_empty.value.status, slug(not_empty.value)) == (409, "directory-not-empty")
    assert (workspace / "build" / "app.map").is_file()  # nothing deleted

    session.delete_file("to-app")  # the link, not what it points to
    assert not (workspace / "to-app").is_symlink()
    assert (workspace / "build" / "out" / "app.js").is_file()
    session.delete_file("build/app.map")
    session.delete_file("empty")  # an empty directory needs no recursive
    session.delete_file("build", recursive=True)
    assert tree(workspace) == []
    assert spy.statuses("deleteFile") == [409, 204, 204, 204, 204]

    with pytest.raises(ProblemError) as gone:
        session.delete_file("build", recursive=True)
    assert (gone.value.status, slug(gone.value)) == (404, "file-not-found")
    with pytest.raises(ProblemError) as itself:
        session.delete_file(".", recursive=True)  # never the workspace itself
    assert (itself.value.status, slug(itself.value)) == (409, "workspace-root")
    assert workspace.is_dir()


# --- paths that leave the workspace ------------------------------------------------------


def test_paths_outside_the_workspace_are_refused(
    session: Session, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"not yours")
    attempts: dict[str, Callable[[str], object]] = {
        "read": lambda p: session.read_file(p),
        "write": lambda p: session.write_file(p, b"overwritten"),
        "list": lambda p: session.list_files(p),
        "delete": lambda p: session.delete_file(p, recursive=True),
        "archive": lambda p: session.archive_files(p),
    }
    for name, attempt in attempts.items():
        for path in ("../outside.txt", "a/../../outside.txt", str(outside)):
            with pytest.raises(ProblemError) as refused:
                attempt(path)
            problem = refused.value
            assert (problem.status, slug(problem)) == (400, "invalid-path"), (name, path)
            assert problem.problem.status == 400 and problem.method in ("GET", "PUT", "DELETE")

    # Through a symlink that points out of the workspace: found out, refused.
    (workspace / "out").symlink_to(tmp_path)
    with pytest.raises(ProblemError) as through_link:
        session.read_file("out/outside.txt")
    assert (through_link.value.status, slug(through_link.value)) == (403, "outside-workspace")
    with pytest.raises(ProblemError) as write_through_link:
        session.write_file("out/outside.txt", b"overwritten")
    assert write_through_link.value.status == 403
    assert slug(write_through_link.value) == "outside-workspace"

    assert outside.read_bytes() == b"not yours"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["outside.txt", "workspace"]
    assert tree(workspace) == ["out"]


# --- upload ----------------------------------------------------------------------------


def test_upload_a_tar_and_a_tar_gz(
    session: Session, spy: SpyTransport, workspace: Path, tmp_path: Path
) -> None:
    files = {"site/index.html": b"<h1>hi</h1>", "site/css/main.css": b"h1 { color: red }"}
    plain = tar_of(files, directories=("site", "site/css"), symlinks={"site/home": "index.html"})

    summary = session.upload_files(plain, path="public")
    assert (summary.path, summary.files, summary.directories, summary.symlinks) == (
        "public",
        2,
        2,
        1,
    )
    assert summary.bytes == sum(len(data) for data in files.values())
    assert tree(workspace) == [
        "public",
        "public/site",
        "public/site/css",
        "public/site/css/main.css",
        "public/site/home",
        "public/site/index.html",
    ]
    assert (workspace / "public/site/css/main.css").read_bytes() == files["site/css/main.css"]
    assert os.readlink(workspace / "public/site/home") == "index.html"
    assert session.read_file("public/site/home") == files["site/index.html"]

    # A tar.gz, from a file object, into the working directory itself; then from a path.
    compressed = tar_of({"README.md": b"# readme\n"}, compress=True)
    assert compressed[:2] == b"\x1f\x8b"
    into_root = session.upload_files(io.BytesIO(compressed))
    assert (into_root.path, into_root.files, into_root.bytes) == ("", 1, len(b"# readme\n"))
    assert (workspace / "README.md").read_bytes() == b"# readme\n"
    saved = tmp_path / "again.tar"
    saved.write_bytes(tar_of({"again.txt": b"again"}))
    assert session.upload_files(saved, path="from-disk").files == 1
    assert (workspace / "from-disk" / "again.txt").read_bytes() == b"again"

    # Sent as what they are: tar, gzip, tar. Never JSON.
    assert spy.content_types("uploadFiles") == [
        "application/x-tar",
        "application/gzip",
        "application/x-tar",
    ]
    assert spy.statuses("uploadFiles") == [201, 201, 201]


def test_a_refused_upload_writes_nothing(
    session: Session, spy: SpyTransport, workspace: Path, tmp_path: Path
) -> None:
    # The escaping entry comes last: the first one would be written if entries were not
    # all checked first.
    escaping = tar_of({"ok.txt": b"ok", "../escape": b"gotcha"})
    with pytest.raises(ProblemError) as refused:
        session.upload_files(escaping)
    assert (refused.value.status, slug(refused.value)) == (422, "archive-entry-refused")
    assert "../escape" in refused.value.detail
    # (a GET next: the daemon may answer before reading the whole body, then close the
    # connection; idempotent calls are retried, uploads are not.)
    assert session.list_files().entries == []
    assert tree(workspace) == [] and not (tmp_path / "escape").exists()

    pointing_out = tar_of({}, symlinks={"link": "../../etc/passwd"})
    with pytest.raises(ProblemError) as link_out:
        session.upload_files(pointing_out, path="sub")
    assert (link_out.value.status, slug(link_out.value)) == (422, "archive-entry-refused")
    assert session.list_files().entries == []

    with pytest.raises(ProblemError) as not_a_tar:
        session.upload_files(gzip.compress(b"just some text, compressed"))
    assert (not_a_tar.value.status, slug(not_a_tar.value)) == (422, "invalid-archive")
    assert session.list_files().entries == []
    assert tree(workspace) == [] and sorted(p.name for p in tmp_path.iterdir()) == ["workspace"]

    # A str is neither bytes nor a path: refused here, before anything is sent.
    sent = len(spy.sent)
    with pytest.raises(TypeError, match="not str"):
        session.upload_files("archive.tar")  # type: ignore[arg-type]
    assert len(spy.sent) == sent
    assert spy.statuses("uploadFiles") == [422, 422, 422]


def test_upload_and_write_are_not_json() -> None:
    # What the requests say they carry, whatever the daemon does with them.
    tar = tar_of({"a": b"a"})
    upload = ops.upload_files("s", tar, "dir")
    assert upload.request_headers()["Content-Type"] == "application/x-tar"
    assert upload.content() == tar and not upload.idempotent
    gz = ops.upload_files("s", gzip.compress(tar), None)
    assert gz.request_headers()["Content-Type"] == "application/gzip"
    write = ops.write_file("s", "a.txt", b'{"not": "json"}')
    assert write.request_headers()["Content-Type"] == "application/octet-stream"
    assert write.content() == b'{"not": "json"}' and write.idempotent
    read = ops.read_file("s", "a.txt", (0, 9))
    assert read.request_headers() == {"Accept": "application/octet-stream", "Range": "bytes=0-9"}
    assert read.content() is None


# --- archive ---------------------------------------------------------------------------


def test_archive_download(session: Session, workspace: Path, tmp_path: Path) -> None:
    content = {
        "src/main.py": b"print('hi')\n",
        "big.bin": b"z" * 3000,
        "odd, name 100%.txt": b"o" * 2000,  # a comma and a percent sign, encoded
        ".gitignore": b"*.log\n",
        "build.log": b"ignored",
        ".git/HEAD": b"ref: refs/heads/main\n",
        "node_modules/dep/index.js": b"module.exports = 1\n",
    }
    for name, data in content.items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_bytes(data)
    (workspace / "main").symlink_to("src/main.py")

    snapshot = session.archive_files(max_file_bytes=1000)
    assert isinstance(snapshot, FileArchive)
    with snapshot.open() as archive:
        members = {m.name: m for m in archive.getmembers()}
        main = archive.extractfile("src/main.py")
        assert main is not None and main.read() == content["src/main.py"]
    # No .git, node_modules or ignored files; the big ones left out and named.
    assert sorted(members) == [".gitignore", "main", "src", "src/main.py"]
    assert members["main"].issym() and members["main"].linkname == "src/main.py"
    assert members["src"].isdir()
    taken = [".gitignore", "src/main.py"]
    assert snapshot.files == len(taken)
    assert snapshot.bytes == sum(len(content[name]) for name in taken)
    assert snapshot.skipped == 2
    assert sorted(snapshot.skipped_paths) == ["big.bin", "odd, name 100%.txt"]
    assert "content" not in repr(snapshot) and "skipped=2" in repr(snapshot)

    everything = session.archive_files(all=True, max_file_bytes=10_000)
    assert (everything.files, everything.skipped, everything.skipped_paths) == (7, 0, [])
    assert everything.bytes == sum(len(data) for data in content.values())
    saved = everything.save(tmp_path / "snapshot.tar.gz")
    with tarfile.open(saved) as archive:
        names = set(archive.getnames())
    assert {".git/HEAD", "node_modules/dep/index.js", "build.log", "big.bin"} <= names

    one_directory = session.archive_files("src")
    with one_directory.open() as archive:
        assert archive.getnames() == ["main.py"]  # named relative to the directory taken
    assert (one_directory.files, one_directory.bytes) == (1, len(content["src/main.py"]))

    with pytest.raises(ProblemError) as too_big:
        session.archive_files(max_bytes=10)
    assert (too_big.value.status, slug(too_big.value)) == (409, "archive-too-large")
    with pytest.raises(ProblemError) as a_file:
        session.archive_files("big.bin")
    assert (a_file.value.status, slug(a_file.value)) == (409, "wrong-file-kind")


def test_archive_headers_are_decoded() -> None:
    request = httpx.Request("GET", "http://daemon/sessions/s/files/archive")
    headers = {
        "x-archive-files": "3",
        "x-archive-bytes": "42",
        "x-archive-skipped": "3",
        "x-archive-skipped-paths": "a%2Cb.txt,dir/%C3%A9t%C3%A9%20100%25,plain",
    }
    answer = httpx.Response(200, headers=headers, content=b"\x1f\x8b", request=request)
    snapshot = FileArchive.from_response(answer)
    assert (snapshot.files, snapshot.bytes, snapshot.skipped) == (3, 42, 3)
    assert snapshot.skipped_paths == ["a,b.txt", "dir/été 100%", "plain"]
    assert skipped_paths({"x-archive-skipped-paths": ""}) == []
    assert skipped_paths({}) == []
    stripped = httpx.Response(200, content=b"\x1f\x8b", request=request)
    with pytest.raises(ResponseError, match="x-archive-files"):
        FileArchive.from_response(stripped)


def test_range_header() -> None:
    assert range_header((0, 99)) == "bytes=0-99"
    assert range_header((100, None)) == "bytes=100-"
    assert range_header("bytes=-5") == "bytes=-5"


# --- async -----------------------------------------------------------------------------


@pytest.mark.anyio
async def test_files_async(daemon: LocalDaemon, session_id: str, workspace: Path) -> None:
    recorder = AsyncRecordingTransport()
    async with AsyncClient(
        daemon.base_url, token=daemon.token, transport=recorder, retry=FAST_RETRY
    ) as client:
        await client.create_session(session_id, agent="mock", cwd=str(workspace))
        created = await client.write_file(session_id, "docs/plan.md", "# plan\n")
        assert (created.path, created.kind, created.size) == ("docs/plan.md", FileKind.file, 7)
        await client.write_file(session_id, "docs/plan.md", io.BytesIO(b"# plan v2\n"))
        assert recorder.statuses("writeFile") == [201, 200]
        assert await client.read_file(session_id, "docs/plan.md") == b"# plan v2\n"
        assert await client.read_file(session_id, "docs/plan.md", range=(2, 5)) == b"plan"

        session = client.session(session_id)
        summary = await session.upload_files(
            tar_of({"x.txt": b"x", "y/z.txt": b"zz"}, directories=("y",), compress=True),
            path="docs/up",
        )
        assert (summary.files, summary.directories, summary.bytes) == (2, 1, 3)
        listing = await session.list_files("docs", depth=3)
        assert [e.path for e in listing.entries] == [
            "docs/plan.md",
            "docs/up",
            "docs/up/x.txt",
            "docs/up/y",
            "docs/up/y/z.txt",
        ]

        snapshot = await session.archive_files("docs", max_file_bytes=5)
        with snapshot.open() as archive:
            assert sorted(archive.getnames()) == ["up", "up/x.txt", "up/y", "up/y/z.txt"]
        assert (snapshot.files, snapshot.skipped, snapshot.skipped_paths) == (2, 1, ["plan.md"])

        with pytest.raises(ProblemError) as not_empty:
            await session.delete_file("docs")
        assert (not_empty.value.status, slug(not_empty.value)) == (409, "directory-not-empty")
        with pytest.raises(ProblemError) as escape:
            await session.read_file("../x")
        assert (escape.value.status, slug(escape.value)) == (400, "invalid-path")
        with pytest.raises(ProblemError) as refused:
            await session.upload_files(tar_of({"../escape": b"x"}))
        assert (refused.value.status, slug(refused.value)) == (422, "archive-entry-refused")
        await session.delete_file("docs", recursive=True)
        assert (await session.list_files()).entries == []
        assert tree(workspace) == []
        await session.end()
