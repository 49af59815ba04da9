//! Running a workspace operation as the agent user: on a thread of its own whose
//! filesystem uid and gid are that user's and which has no supplementary groups.
//!
//! Linux keeps credentials per thread; glibc's `setuid` family and `setgroups` change every
//! thread of the process, so this uses `setfsuid`/`setfsgid` (per thread by design) and the
//! raw `setgroups` system call. The thread ends with the operation, so its identity never
//! reaches another task.

use sandbox_agents::user::AgentUser;

use super::WorkspaceError;

/// Runs `job` on a new thread acting as `user` (`None`: on tokio's blocking pool, as the
/// daemon), and answers what it returns.
pub async fn run<T, F>(user: Option<AgentUser>, job: F) -> Result<T, WorkspaceError>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    let Some(user) = user else {
        // The daemon's own user: any blocking thread will do.
        return tokio::task::spawn_blocking(job)
            .await
            .map_err(|_| WorkspaceError::Internal("a workspace operation panicked".into()));
    };
    let (done, answer) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("workspace".into())
        .spawn(move || {
            let outcome = become_user(&user).map(|()| job());
            let _ = done.send(outcome);
        })
        .map_err(|e| WorkspaceError::Internal(format!("starting a workspace thread: {e}")))?;
    answer
        .await
        .map_err(|_| WorkspaceError::Internal("a workspace operation panicked".into()))?
}

/// Makes the calling thread reach files as `user`.
fn become_user(user: &AgentUser) -> Result<(), WorkspaceError> {
    // SAFETY: geteuid has no preconditions.
    let euid = unsafe { libc::geteuid() };
    if euid == user.uid {
        return Ok(());
    }
    if euid != 0 {
        return Err(WorkspaceError::Internal(format!(
            "the daemon (uid {euid}) cannot act as the agent user `{}` (uid {}): it must run as root",
            user.name, user.uid
        )));
    }
    // SAFETY: the raw system calls change only this thread's credentials (glibc's wrappers
    // would change every thread's); a zero-length group list needs no buffer.
    unsafe {
        if libc::syscall(libc::SYS_setgroups, 0usize, std::ptr::null::<libc::gid_t>()) != 0 {
            return Err(WorkspaceError::Internal(format!(
                "dropping supplementary groups: {}",
                std::io::Error::last_os_error()
            )));
        }
        libc::setfsgid(user.gid);
        libc::setfsuid(user.uid);
        // Each call answers the previous value; an invalid id (-1) changes nothing.
        let fsuid = libc::setfsuid(u32::MAX) as u32;
        let fsgid = libc::setfsgid(u32::MAX) as u32;
        if (fsuid, fsgid) != (user.uid, user.gid) {
            return Err(WorkspaceError::Internal(format!(
                "acting as the agent user `{}` failed (filesystem uid {fsuid}, gid {fsgid})",
                user.name
            )));
        }
    }
    Ok(())
}
