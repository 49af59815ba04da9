//! A pseudo-terminal for a process started with `tty: true`: the master side the daemon
//! reads and writes (non-blocking, through tokio's reactor), the slave side the process
//! gets as its stdin, stdout, stderr and controlling terminal.
//!
//! Invariants: both sides are opened close-on-exec, so no other child inherits them; the
//! daemon drops its copy of the slave once the process started, so the master reads
//! end (EIO, taken as end of file) when the process and everything it left holding the
//! terminal have gone.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::process::Stdio;

use rustix::fs::{Mode, OFlags};
use rustix::pty::OpenptFlags;
use rustix::termios::Winsize;
use sandbox_universal::TerminalSize;
use tokio::io::unix::AsyncFd;

/// The daemon's side of a terminal.
#[derive(Debug)]
pub struct Pty {
    master: AsyncFd<OwnedFd>,
}

/// The process's side of a terminal, until it is handed to the process.
#[derive(Debug)]
pub struct Slave(OwnedFd);

impl Slave {
    /// A `Stdio` on the terminal (a duplicate, so stdin, stdout and stderr each get one).
    pub fn stdio(&self) -> io::Result<Stdio> {
        Ok(Stdio::from(self.0.try_clone()?))
    }

    /// Gives the terminal device to the user the process runs as (`--agent-user`), as a
    /// login would.
    pub fn give_to(&self, uid: u32, gid: u32) -> io::Result<()> {
        let (uid, gid) = (
            rustix::fs::Uid::from_raw(uid),
            rustix::fs::Gid::from_raw(gid),
        );
        rustix::fs::fchown(&self.0, Some(uid), Some(gid))?;
        Ok(())
    }
}

/// Opens a terminal of `size`.
pub fn open(size: TerminalSize) -> io::Result<(Pty, Slave)> {
    let master = rustix::pty::openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY)?;
    // openpt takes no close-on-exec flag on every libc; set it right away.
    rustix::io::fcntl_setfd(&master, rustix::io::FdFlags::CLOEXEC)?;
    rustix::pty::grantpt(&master)?;
    rustix::pty::unlockpt(&master)?;
    let name = rustix::pty::ptsname(&master, Vec::new())?;
    let slave = rustix::fs::open(
        name.as_c_str(),
        OFlags::RDWR | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    rustix::termios::tcsetwinsize(&slave, winsize(size))?;
    rustix::fs::fcntl_setfl(&master, OFlags::RDWR | OFlags::NONBLOCK)?;
    // SAFETY: an `OwnedFd` answers the same open descriptor for as long as it is owned,
    // and the `AsyncFd` owns it until dropped.
    let master = unsafe { AsyncFd::register(master) }
        .map_err(|e| io::Error::other(format!("watching the terminal: {e}")))?;
    Ok((Pty { master }, Slave(slave)))
}

/// Makes the calling (child) process a session leader with its stdin — the terminal — as
/// its controlling terminal. For `pre_exec`: it makes only async-signal-safe system calls.
pub fn become_terminal_leader() -> io::Result<()> {
    rustix::process::setsid()?;
    rustix::process::ioctl_tiocsctty(rustix::stdio::stdin())?;
    Ok(())
}

fn winsize(size: TerminalSize) -> Winsize {
    Winsize {
        ws_row: size.rows,
        ws_col: size.cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    }
}

impl Pty {
    /// Reads what the process wrote; `Ok(0)` once the terminal has no process left.
    pub async fn read(&self, buffer: &mut [u8]) -> io::Result<usize> {
        loop {
            let mut ready = self.master.readable().await?;
            match ready.try_io(|fd| Ok(rustix::io::read(fd.get_ref(), &mut *buffer)?)) {
                Ok(Ok(read)) => return Ok(read),
                // Linux answers EIO once every slave descriptor is closed.
                Ok(Err(e)) if e.raw_os_error() == Some(libc::EIO) => return Ok(0),
                Ok(Err(e)) => return Err(e),
                Err(_would_block) => continue,
            }
        }
    }

    /// Writes all of `data` as the process's input.
    pub async fn write_all(&self, mut data: &[u8]) -> io::Result<()> {
        while !data.is_empty() {
            let mut ready = self.master.writable().await?;
            match ready.try_io(|fd| Ok(rustix::io::write(fd.get_ref(), data)?)) {
                Ok(Ok(written)) => data = &data[written..],
                Ok(Err(e)) => return Err(e),
                Err(_would_block) => continue,
            }
        }
        Ok(())
    }

    /// Sets the terminal's size (the process gets SIGWINCH).
    pub fn resize(&self, size: TerminalSize) -> io::Result<()> {
        rustix::termios::tcsetwinsize(self.master.get_ref().as_fd(), winsize(size))?;
        Ok(())
    }
}
