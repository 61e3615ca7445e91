//! Files written whole or not at all: the bytes go to a temporary file in
//! the same folder as the final name (`.NAME.dynaslice-partial-<random>`),
//! which is fsync'd and renamed over the final name only once complete. A
//! failed, cancelled or crashed write never leaves part of a file under the
//! final name, and a file already there stays as it was until the rename
//! (the same folder, so the rename is atomic: never a copy across file
//! systems).

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use tokio::io::{AsyncSeekExt, AsyncWriteExt};

use crate::error::HostError;

/// Temporary names tried before giving up (each a fresh 64-bit random
/// suffix: a second collision means something else is wrong).
const NAME_ATTEMPTS: u32 = 4;

/// A file being written under a temporary name; removed when dropped
/// (on any error, or a cancelled task) unless [`PartialFile::commit`]
/// renamed it to its final name.
pub(crate) struct PartialFile {
    path: PathBuf,
    temp: PathBuf,
    /// `None` once committed (or while being committed).
    file: Option<tokio::fs::File>,
    /// Renamed to `path`, or kept for a later run: nothing to remove.
    renamed: bool,
}

impl PartialFile {
    /// Creates an empty temporary file beside `path`.
    pub async fn create(path: &Path) -> Result<Self, HostError> {
        let (folder, name) = beside(path)?;
        let mut last = None;
        for _ in 0..NAME_ATTEMPTS {
            let temp = folder.join(format!(
                ".{}.dynaslice-partial-{:016x}",
                name.to_string_lossy(),
                fastrand::u64(..)
            ));
            match tokio::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&temp)
                .await
            {
                Ok(file) => {
                    return Ok(Self {
                        path: path.to_path_buf(),
                        temp,
                        file: Some(file),
                        renamed: false,
                    });
                }
                Err(e) if e.kind() == ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => return Err(HostError::io(temp.display(), e)),
            }
        }
        Err(HostError::io(
            path.display(),
            last.unwrap_or_else(|| ErrorKind::AlreadyExists.into()),
        ))
    }

    /// A temporary file under a fixed name beside `path`
    /// (`.NAME.dynaslice-resumable`), kept when dropped so that a later
    /// run continues it: created empty when `from` is `None`, else the one
    /// there cut to `from` bytes (refused when it is shorter: what it held
    /// was lost, by a crash of the machine before it was synced).
    pub async fn resumable(path: &Path, from: Option<u64>) -> Result<Self, HostError> {
        let (folder, name) = beside(path)?;
        let temp = folder.join(format!(".{}.dynaslice-resumable", name.to_string_lossy()));
        let failed = |e| HostError::io(temp.display(), e);
        let mut file = tokio::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(from.is_none())
            .open(&temp)
            .await
            .map_err(failed)?;
        if let Some(from) = from {
            let len = file.metadata().await.map_err(failed)?.len();
            if len < from {
                return Err(HostError::Input(format!(
                    "{} holds {len} bytes, not the {from} its checkpoint says: start again \
                     without resuming",
                    temp.display()
                )));
            }
            file.set_len(from).await.map_err(failed)?;
            file.seek(std::io::SeekFrom::End(0)).await.map_err(failed)?;
        }
        Ok(Self {
            path: path.to_path_buf(),
            temp,
            file: Some(file),
            // Kept until committed.
            renamed: true,
        })
    }

    /// Writes what was appended through to the file system (not to the
    /// disk): a crash of this process after it loses none of it.
    pub async fn flush(&mut self) -> Result<(), HostError> {
        let result = self.open()?.flush().await;
        result.map_err(|e| self.failed(e))
    }

    fn open(&mut self) -> Result<&mut tokio::fs::File, HostError> {
        self.file
            .as_mut()
            .ok_or_else(|| HostError::Internal("a committed file was written to".into()))
    }

    fn failed(&self, e: std::io::Error) -> HostError {
        HostError::io(self.temp.display(), e)
    }

    /// Appends `bytes`.
    pub async fn write(&mut self, bytes: &[u8]) -> Result<(), HostError> {
        let result = self.open()?.write_all(bytes).await;
        result.map_err(|e| self.failed(e))
    }

    /// Empties the file, to write it again from the start.
    pub async fn restart(&mut self) -> Result<(), HostError> {
        let file = self.open()?;
        let result = async {
            file.flush().await?;
            file.set_len(0).await?;
            file.rewind().await.map(drop)
        }
        .await;
        result.map_err(|e| self.failed(e))
    }

    /// Makes the bytes durable and gives them the final name (replacing a
    /// file there), then makes the rename durable too.
    pub async fn commit(mut self) -> Result<(), HostError> {
        let mut file = self
            .file
            .take()
            .ok_or_else(|| HostError::Internal("a file was committed twice".into()))?;
        let synced = async {
            file.flush().await?;
            file.sync_all().await
        }
        .await;
        drop(file);
        synced.map_err(|e| self.failed(e))?;
        tokio::fs::rename(&self.temp, &self.path)
            .await
            .map_err(|e| HostError::io(self.path.display(), e))?;
        self.renamed = true;
        // The rename survives a crash once the folder is synced too. The
        // file is complete and in place by now, so a folder that cannot be
        // synced is not reported as a failed read: at worst a crash brings
        // back the previous name's state, never a partial file.
        let folder = self.path.parent().filter(|f| !f.as_os_str().is_empty());
        if let Ok(dir) = tokio::fs::File::open(folder.unwrap_or(Path::new("."))).await {
            let _ = dir.sync_all().await;
        }
        Ok(())
    }
}

/// The folder `path` is in (`.` for a bare name) and its file name.
fn beside(path: &Path) -> Result<(&Path, &std::ffi::OsStr), HostError> {
    let name = path
        .file_name()
        .ok_or_else(|| HostError::Input(format!("{} does not name a file", path.display())))?;
    let folder = match path.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder,
        _ => Path::new("."),
    };
    Ok((folder, name))
}

impl Drop for PartialFile {
    fn drop(&mut self) {
        if !self.renamed {
            // Best effort: nothing else can be done about a temporary file
            // that cannot be removed, and its name says what it is.
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}
