//! Taking the wanted files out of a download: a raw executable is the file itself; from a
//! tarball or a zip only the named members are written (nothing else of the archive touches
//! the disk, so no path in it can escape the install directory).

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use sandbox_agents::release::Archive;

use crate::error::InstallError;

/// Writes each `(member, name)` of the archive at `download` to `dir/name`, mode 0755.
/// `archive_url` names the download in errors. A member matches an entry by its full path
/// (a leading `./` ignored) or, for a member without `/`, by file name.
pub fn unpack(
    download: &Path,
    archive: Archive,
    files: &[(String, String)],
    dir: &Path,
    archive_url: &str,
) -> Result<(), InstallError> {
    match archive {
        Archive::Raw => {
            let (_, name) = files.first().expect("a release file names its executable");
            let dest = dir.join(name);
            std::fs::copy(download, &dest)
                .map_err(|e| InstallError::io("copying the executable", &dest, e))?;
            executable(&dest)
        }
        Archive::TarGz => {
            let open = File::open(download)
                .map_err(|e| InstallError::io("opening the download", download, e))?;
            let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(open));
            let mut wanted = Wanted::new(files, dir, archive_url);
            let corrupt = |e: io::Error| corrupt(archive_url, e);
            for entry in tar.entries().map_err(corrupt)? {
                let mut entry = entry.map_err(corrupt)?;
                if entry.header().entry_type().is_file() {
                    let path = entry
                        .path()
                        .map_err(corrupt)?
                        .to_string_lossy()
                        .into_owned();
                    if wanted.take(&path, &mut entry)? {
                        return Ok(());
                    }
                }
            }
            wanted.missing()
        }
        Archive::Zip => {
            let open = File::open(download)
                .map_err(|e| InstallError::io("opening the download", download, e))?;
            let mut zip = zip::ZipArchive::new(open).map_err(|e| corrupt(archive_url, e.into()))?;
            let mut wanted = Wanted::new(files, dir, archive_url);
            for i in 0..zip.len() {
                let mut entry = zip
                    .by_index(i)
                    .map_err(|e| corrupt(archive_url, e.into()))?;
                if entry.is_file() {
                    let path = entry.name().to_string();
                    if wanted.take(&path, &mut entry)? {
                        return Ok(());
                    }
                }
            }
            wanted.missing()
        }
    }
}

/// The archive members still to write.
struct Wanted<'a> {
    remaining: Vec<&'a (String, String)>,
    dir: &'a Path,
    url: &'a str,
}

impl<'a> Wanted<'a> {
    fn new(files: &'a [(String, String)], dir: &'a Path, url: &'a str) -> Self {
        Self {
            remaining: files.iter().collect(),
            dir,
            url,
        }
    }

    /// Writes the entry at `path` when it is wanted; true once every member is written.
    fn take(&mut self, path: &str, entry: &mut impl Read) -> Result<bool, InstallError> {
        if let Some(i) = self
            .remaining
            .iter()
            .position(|(member, _)| matches(path, member))
        {
            let (_, name) = self.remaining.remove(i);
            write(entry, &self.dir.join(name), self.url)?;
        }
        Ok(self.remaining.is_empty())
    }

    fn missing(&self) -> Result<(), InstallError> {
        Err(InstallError::MissingMember {
            archive: self.url.into(),
            member: self.remaining[0].0.clone(),
        })
    }
}

fn matches(path: &str, member: &str) -> bool {
    let path = path.trim_start_matches("./");
    path == member || (!member.contains('/') && path.rsplit('/').next() == Some(member))
}

fn write(from: &mut impl Read, dest: &Path, archive_url: &str) -> Result<(), InstallError> {
    let mut file = File::create(dest).map_err(|e| InstallError::io("unpacking", dest, e))?;
    io::copy(from, &mut file).map_err(|e| match e.kind() {
        io::ErrorKind::InvalidData | io::ErrorKind::UnexpectedEof => corrupt(archive_url, e),
        _ => InstallError::io("unpacking", dest, e),
    })?;
    file.flush()
        .map_err(|e| InstallError::io("unpacking", dest, e))?;
    executable(dest)
}

fn executable(path: &Path) -> Result<(), InstallError> {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| InstallError::io("marking executable", path, e))
}

fn corrupt(url: &str, error: io::Error) -> InstallError {
    InstallError::Corrupt {
        what: "the archive".into(),
        url: url.into(),
        detail: error.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn members_come_out_of_tarballs_and_zips_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let tgz = dir.path().join("a.tar.gz");
        {
            let gz = flate2::write::GzEncoder::new(File::create(&tgz).unwrap(), Default::default());
            let mut tar = tar::Builder::new(gz);
            for (path, body) in [
                ("./codex-x86_64", &b"codex"[..]),
                ("package/vendor/x/bin/host", b"host"),
                ("../evil", b"no"),
            ] {
                let mut header = tar::Header::new_gnu();
                header.set_size(body.len() as u64);
                header.set_mode(0o644);
                header.set_entry_type(tar::EntryType::Regular);
                // `append_data` refuses `..`; write the name raw like a hostile archive.
                header.as_gnu_mut().unwrap().name[..path.len()].copy_from_slice(path.as_bytes());
                header.set_cksum();
                tar.append(&header, body).unwrap();
            }
            tar.into_inner().unwrap().finish().unwrap();
        }
        let out = tempfile::tempdir().unwrap();
        unpack(
            &tgz,
            Archive::TarGz,
            &files(&[
                ("codex-x86_64", "codex"),
                ("package/vendor/x/bin/host", "host"),
            ]),
            out.path(),
            "u",
        )
        .unwrap();
        assert_eq!(std::fs::read(out.path().join("codex")).unwrap(), b"codex");
        assert_eq!(std::fs::read(out.path().join("host")).unwrap(), b"host");
        let mode = std::fs::metadata(out.path().join("codex"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);
        assert!(!out.path().join("evil").exists() && !dir.path().join("evil").exists());

        let error = unpack(
            &tgz,
            Archive::TarGz,
            &files(&[("opencode", "opencode")]),
            out.path(),
            "u",
        )
        .unwrap_err();
        assert!(
            matches!(error, InstallError::MissingMember { .. }),
            "{error}"
        );

        let zip_path = dir.path().join("a.zip");
        {
            let mut zip = zip::ZipWriter::new(File::create(&zip_path).unwrap());
            zip.start_file("opencode", zip::write::SimpleFileOptions::default())
                .unwrap();
            zip.write_all(b"oc").unwrap();
            zip.finish().unwrap();
        }
        unpack(
            &zip_path,
            Archive::Zip,
            &files(&[("opencode", "opencode")]),
            out.path(),
            "u",
        )
        .unwrap();
        assert_eq!(std::fs::read(out.path().join("opencode")).unwrap(), b"oc");

        // A truncated tarball is corrupt, not a missing file.
        let bytes = std::fs::read(&tgz).unwrap();
        std::fs::write(&tgz, &bytes[..bytes.len() / 2]).unwrap();
        let error = unpack(
            &tgz,
            Archive::TarGz,
            &files(&[("opencode", "opencode")]),
            out.path(),
            "u",
        )
        .unwrap_err();
        assert!(matches!(error, InstallError::Corrupt { .. }), "{error}");
    }
}
