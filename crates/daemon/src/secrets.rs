//! Keeping the daemon's secrets (its token, the provider keys it hands to agents) out of
//! reach of the processes it starts.
//!
//! Agents never get the daemon's environment (`sandbox_agents::process` builds theirs from
//! an allow-list; so does the installer for npm, `sandbox_install::npm::npm_env`), and the daemon makes itself non-dumpable, so processes of its own user
//! cannot read its `/proc/<pid>/{environ,mem}` or attach to it. That cannot hold against
//! root: agents running as root (the daemon's user, or `--agent-user root`) can read
//! anything, which the daemon says at start; `--agent-user` runs them as another user.
//! A token on the command line (`--token`) is visible to every local user through
//! `/proc/<pid>/cmdline`: `--token-file` or `SANDBOX_DAEMON_TOKEN` keep it out.

/// Makes the process non-dumpable, and its files private whatever umask it was started
/// with (agents get the starting umask back, never one that lets others write). Call first
/// thing in `main`, before any thread starts.
pub fn protect_process() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl(PR_SET_DUMPABLE, 0) only changes this process's dumpable flag.
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
    // SAFETY: umask has no preconditions; no other thread runs yet.
    let started_with = unsafe { libc::umask(0o077) };
    sandbox_agents::process::set_agent_umask(started_with as u32 | 0o022);
}
