//! Where `get --out` writes. A regular file, or a path where nothing is
//! yet, is written whole or not at all through [`PartialFile`] (a
//! temporary file renamed over it once complete). A symlink is followed:
//! the file it points to is replaced, and the link stays a link. Anything
//! else a path can name (a FIFO, a character device such as `/dev/null`,
//! a descriptor such as `/dev/stdout`) is written directly and never
//! renamed over: its bytes cannot be taken back, so a read that must start
//! again from a newer version fails instead (`CHUNKS_VANISHED`). `-` is
//! standard output, written directly too.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use tokio::io::AsyncWriteExt;

use crate::error::HostError;
use crate::partial_file::PartialFile;

/// Symlinks followed before giving up, as the kernel's own limit.
const MAX_LINKS: usize = 40;

/// An output being written.
pub(crate) enum OutFile {
    /// A regular file, replaced once complete.
    Whole(PartialFile),
    /// Written as the bytes come.
    Direct(tokio::fs::File, PathBuf),
    /// Standard output (`-`), written as the bytes come.
    Stdout(tokio::io::Stdout),
}

impl OutFile {
    /// Opens the output `path` names (see the module's doc).
    pub async fn create(path: &Path) -> Result<Self, HostError> {
        if path == Path::new("-") {
            return Ok(Self::Stdout(tokio::io::stdout()));
        }
        match target(path)? {
            Target::Replace(file) => Ok(Self::Whole(PartialFile::create(&file).await?)),
            Target::Direct => {
                let file = tokio::fs::OpenOptions::new()
                    .write(true)
                    .open(path)
                    .await
                    .map_err(|e| HostError::io(path.display(), e))?;
                Ok(Self::Direct(file, path.to_path_buf()))
            }
        }
    }

    /// Opens the output `path` names for an export a later run may continue
    /// (see [`PartialFile::resumable`]): a regular file is written under a
    /// fixed temporary name that stays when the run fails, and `from`
    /// continues it at that many bytes. Anything else is written directly,
    /// and cannot be continued.
    pub async fn resumable(path: &Path, from: Option<u64>) -> Result<Self, HostError> {
        let target = match path == Path::new("-") {
            true => Target::Direct,
            false => target(path)?,
        };
        match (target, from) {
            (Target::Replace(file), from) => {
                Ok(Self::Whole(PartialFile::resumable(&file, from).await?))
            }
            (Target::Direct, None) => Self::create(path).await,
            (Target::Direct, Some(_)) => Err(HostError::Input(format!(
                "{} is not a regular file: what was written to it cannot be continued",
                path.display()
            ))),
        }
    }

    /// Writes what was appended through to the file system.
    pub async fn flush(&mut self) -> Result<(), HostError> {
        match self {
            Self::Whole(file) => file.flush().await,
            Self::Direct(file, path) => file
                .flush()
                .await
                .map_err(|e| HostError::io(path.display(), e)),
            Self::Stdout(out) => out.flush().await.map_err(stdout_error),
        }
    }

    /// True when what was written can be thrown away to start again.
    pub fn restartable(&self) -> bool {
        matches!(self, Self::Whole(_))
    }

    /// Appends `bytes`.
    pub async fn write(&mut self, bytes: &[u8]) -> Result<(), HostError> {
        match self {
            Self::Whole(file) => file.write(bytes).await,
            Self::Direct(file, path) => file
                .write_all(bytes)
                .await
                .map_err(|e| HostError::io(path.display(), e)),
            Self::Stdout(out) => out.write_all(bytes).await.map_err(stdout_error),
        }
    }

    /// Empties the output, to write it again from the start.
    pub async fn restart(&mut self) -> Result<(), HostError> {
        match self {
            Self::Whole(file) => file.restart().await,
            Self::Direct(..) | Self::Stdout(_) => Err(HostError::Internal(
                "an output written directly was asked to start again".into(),
            )),
        }
    }

    /// Finishes the output: a regular file takes its name.
    pub async fn commit(self) -> Result<(), HostError> {
        match self {
            Self::Whole(file) => file.commit().await,
            Self::Direct(mut file, path) => file
                .flush()
                .await
                .map_err(|e| HostError::io(path.display(), e)),
            Self::Stdout(mut out) => out.flush().await.map_err(stdout_error),
        }
    }
}

fn stdout_error(e: std::io::Error) -> HostError {
    HostError::io("standard output", e)
}

/// Writes `bytes` to `path` as `get --out` does: a regular file whole or
/// not at all, through a symlink to its file, to anything else directly
/// (see the module's doc).
pub async fn replace_file(path: &Path, bytes: &[u8]) -> Result<(), HostError> {
    let mut file = OutFile::create(path).await?;
    file.write(bytes).await?;
    file.commit().await
}

/// How an output is written.
#[derive(Debug, PartialEq)]
enum Target {
    /// Through a temporary file renamed to this path.
    Replace(PathBuf),
    /// Directly.
    Direct,
}

fn target(path: &Path) -> Result<Target, HostError> {
    let Some(end) = follow(path)? else {
        return Ok(Target::Direct);
    };
    match std::fs::metadata(&end) {
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(Target::Replace(end)),
        Err(e) => Err(HostError::io(path.display(), e)),
        Ok(meta) if meta.is_dir() => Err(HostError::Input(format!(
            "{} is a folder, not a file",
            path.display()
        ))),
        Ok(meta) if meta.is_file() => Ok(Target::Replace(end)),
        Ok(_) => Ok(Target::Direct),
    }
}

/// The path at the end of `path`'s symlinks (relative links resolved
/// against their own folder); `None` when `path` is, or leads to, a file
/// descriptor's link (`/proc/<pid>/fd/N`, which `/dev/fd/N` and
/// `/dev/stdout` lead to), which only the kernel can follow.
fn follow(path: &Path) -> Result<Option<PathBuf>, HostError> {
    let mut at = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.file_type().is_symlink() => {
                if is_descriptor(&at) {
                    return Ok(None);
                }
                let next = std::fs::read_link(&at).map_err(|e| HostError::io(at.display(), e))?;
                at = match at.parent() {
                    Some(folder) if next.is_relative() => folder.join(next),
                    _ => next,
                };
            }
            Ok(_) => return Ok(Some(at)),
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Some(at)),
            Err(e) => return Err(HostError::io(path.display(), e)),
        }
    }
    Err(HostError::io(
        path.display(),
        std::io::Error::other("too many levels of symbolic links"),
    ))
}

/// True when the symlink `link` sits in a process's descriptor folder
/// (`/proc/<pid>/fd`, `/proc/<pid>/task/<tid>/fd`), however it is spelled.
fn is_descriptor(link: &Path) -> bool {
    let folder = match link.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder,
        _ => Path::new("."),
    };
    std::fs::canonicalize(folder).is_ok_and(|f| f.starts_with("/proc") && f.ends_with("fd"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "dynaslice-out-file-{name}-{:016x}",
            fastrand::u64(..)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_regular_file_or_a_new_path_is_replaced_where_it_is() {
        let dir = scratch("regular");
        let file = dir.join("a.bin");
        assert_eq!(target(&file).unwrap(), Target::Replace(file.clone()));
        std::fs::write(&file, b"old").unwrap();
        assert_eq!(target(&file).unwrap(), Target::Replace(file.clone()));
        assert_eq!(target(&dir).unwrap_err().code().as_str(), "INPUT_INVALID");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_symlink_is_followed_to_its_file_even_dangling() {
        let dir = scratch("links");
        let real = dir.join("sub").join("real.bin");
        std::fs::create_dir_all(real.parent().unwrap()).unwrap();
        let link = dir.join("link");
        std::os::unix::fs::symlink("sub/real.bin", &link).unwrap();
        assert_eq!(
            target(&link).unwrap(),
            Target::Replace(dir.join("sub/real.bin"))
        );
        std::fs::write(&real, b"old").unwrap();
        let chain = dir.join("chain");
        std::os::unix::fs::symlink(&link, &chain).unwrap();
        assert_eq!(
            target(&chain).unwrap(),
            Target::Replace(dir.join("sub/real.bin"))
        );
        let looped = dir.join("loop");
        std::os::unix::fs::symlink(&looped, &looped).unwrap();
        assert!(target(&looped).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn devices_fifos_and_descriptors_are_written_directly() {
        assert_eq!(target(Path::new("/dev/null")).unwrap(), Target::Direct);
        assert_eq!(target(Path::new("/dev/stdout")).unwrap(), Target::Direct);
        // A descriptor open on a regular file is written through, never
        // renamed over, however its link is spelled.
        let dir = scratch("descriptor");
        let file = std::fs::File::create(dir.join("open.bin")).unwrap();
        let fd = std::os::fd::AsRawFd::as_raw_fd(&file);
        for spelled in [format!("/dev/fd/{fd}"), format!("/proc/self/fd/{fd}")] {
            assert_eq!(
                target(Path::new(&spelled)).unwrap(),
                Target::Direct,
                "{spelled}"
            );
        }
        drop(file);
        std::fs::remove_dir_all(&dir).unwrap();
        let dir = scratch("fifo");
        let fifo = dir.join("pipe");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        assert_eq!(target(&fifo).unwrap(), Target::Direct);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
