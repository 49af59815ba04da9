//! The machines agents are built for: operating system, CPU and (on Linux) C library, and
//! how this machine is detected. Each agent names platforms its own way; those names are
//! facts in the manifest ([`PlatformNames`]).

use std::fmt;
use std::path::Path;

/// An operating system agents ship binaries for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Os {
    /// Linux.
    Linux,
    /// macOS.
    Macos,
}

/// A CPU architecture agents ship binaries for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Arch {
    /// x86-64.
    X64,
    /// 64-bit ARM.
    Arm64,
}

/// A machine an agent's executable is built for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Platform {
    /// The operating system.
    pub os: Os,
    /// The CPU.
    pub arch: Arch,
    /// On Linux, whether the C library is musl (Alpine) rather than glibc.
    pub musl: bool,
}

impl Platform {
    /// Every platform agents are installed on.
    pub const ALL: [Platform; 6] = [
        Platform::linux(Arch::X64, false),
        Platform::linux(Arch::X64, true),
        Platform::linux(Arch::Arm64, false),
        Platform::linux(Arch::Arm64, true),
        Platform::macos(Arch::X64),
        Platform::macos(Arch::Arm64),
    ];

    /// A Linux platform.
    pub const fn linux(arch: Arch, musl: bool) -> Self {
        Self {
            os: Os::Linux,
            arch,
            musl,
        }
    }

    /// A macOS platform.
    pub const fn macos(arch: Arch) -> Self {
        Self {
            os: Os::Macos,
            arch,
            musl: false,
        }
    }

    /// The machine this build runs on, its C library detected at run time (a glibc build
    /// of the daemon may run on a musl system through a compatibility layer, and the
    /// agents' own binaries must match the system, not the daemon).
    pub fn current() -> Option<Self> {
        Self::detect(std::env::consts::OS, std::env::consts::ARCH, Path::new("/"))
    }

    /// The platform of an `os`/`arch` pair (Rust's names), the C library read from the
    /// dynamic loaders present under `root`; `None` for a machine no agent ships for.
    pub fn detect(os: &str, arch: &str, root: &Path) -> Option<Self> {
        let arch = match arch {
            "x86_64" => Arch::X64,
            "aarch64" => Arch::Arm64,
            _ => return None,
        };
        match os {
            "linux" => Some(Self::linux(arch, is_musl(arch, root))),
            "macos" => Some(Self::macos(arch)),
            _ => None,
        }
    }

    /// npm's name of the CPU (`x64`, `arm64`).
    pub fn arch_name(&self) -> &'static str {
        match self.arch {
            Arch::X64 => "x64",
            Arch::Arm64 => "arm64",
        }
    }

    /// The Rust target triple of the musl (Linux) or Apple build, e.g.
    /// `x86_64-unknown-linux-musl`.
    pub fn triple(&self) -> &'static str {
        match (self.os, self.arch) {
            (Os::Linux, Arch::X64) => "x86_64-unknown-linux-musl",
            (Os::Linux, Arch::Arm64) => "aarch64-unknown-linux-musl",
            (Os::Macos, Arch::X64) => "x86_64-apple-darwin",
            (Os::Macos, Arch::Arm64) => "aarch64-apple-darwin",
        }
    }

    /// `pattern` with `{arch}` (npm's CPU name) and `{triple}` filled in.
    pub fn expand(&self, pattern: &str) -> String {
        pattern
            .replace("{arch}", self.arch_name())
            .replace("{triple}", self.triple())
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let os = match self.os {
            Os::Linux => "linux",
            Os::Macos => "darwin",
        };
        write!(f, "{os}-{}", self.arch_name())?;
        if self.musl {
            f.write_str("-musl")?;
        }
        Ok(())
    }
}

/// Whether the Linux system under `root` runs on musl: its musl loader is there and no
/// glibc loader is.
fn is_musl(arch: Arch, root: &Path) -> bool {
    let (musl, glibc) = match arch {
        Arch::X64 => (
            "lib/ld-musl-x86_64.so.1",
            [
                "lib64/ld-linux-x86-64.so.2",
                "lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
            ],
        ),
        Arch::Arm64 => (
            "lib/ld-musl-aarch64.so.1",
            [
                "lib/ld-linux-aarch64.so.1",
                "lib/aarch64-linux-gnu/ld-linux-aarch64.so.1",
            ],
        ),
    };
    root.join(musl).exists() && !glibc.iter().any(|g| root.join(g).exists())
}

/// One agent's names for the platforms it ships (`None`: not shipped there).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlatformNames {
    /// Linux x64, glibc.
    pub linux_x64: Option<&'static str>,
    /// Linux x64, musl.
    pub linux_x64_musl: Option<&'static str>,
    /// Linux arm64, glibc.
    pub linux_arm64: Option<&'static str>,
    /// Linux arm64, musl.
    pub linux_arm64_musl: Option<&'static str>,
    /// macOS Intel.
    pub darwin_x64: Option<&'static str>,
    /// macOS Apple Silicon.
    pub darwin_arm64: Option<&'static str>,
}

impl PlatformNames {
    /// The agent's name for `platform`, when it ships there.
    pub fn get(&self, platform: Platform) -> Option<&'static str> {
        match (platform.os, platform.arch, platform.musl) {
            (Os::Linux, Arch::X64, false) => self.linux_x64,
            (Os::Linux, Arch::X64, true) => self.linux_x64_musl,
            (Os::Linux, Arch::Arm64, false) => self.linux_arm64,
            (Os::Linux, Arch::Arm64, true) => self.linux_arm64_musl,
            (Os::Macos, Arch::X64, _) => self.darwin_x64,
            (Os::Macos, Arch::Arm64, _) => self.darwin_arm64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(root: &Path, path: &str) {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "").unwrap();
    }

    #[test]
    fn the_c_library_is_read_from_the_loaders_present() {
        let glibc = tempfile::tempdir().unwrap();
        touch(glibc.path(), "lib64/ld-linux-x86-64.so.2");
        assert_eq!(
            Platform::detect("linux", "x86_64", glibc.path()),
            Some(Platform::linux(Arch::X64, false))
        );
        let alpine = tempfile::tempdir().unwrap();
        touch(alpine.path(), "lib/ld-musl-aarch64.so.1");
        assert_eq!(
            Platform::detect("linux", "aarch64", alpine.path()),
            Some(Platform::linux(Arch::Arm64, true))
        );
        // gcompat-style systems with both: glibc binaries run, so glibc is chosen.
        touch(alpine.path(), "lib/ld-linux-aarch64.so.1");
        assert!(
            !Platform::detect("linux", "aarch64", alpine.path())
                .unwrap()
                .musl
        );
        assert_eq!(
            Platform::detect("macos", "aarch64", Path::new("/nonexistent")),
            Some(Platform::macos(Arch::Arm64))
        );
        assert_eq!(Platform::detect("windows", "x86_64", glibc.path()), None);
        assert_eq!(Platform::detect("linux", "riscv64", glibc.path()), None);
    }

    #[test]
    fn platforms_print_and_expand() {
        assert_eq!(
            Platform::linux(Arch::X64, true).to_string(),
            "linux-x64-musl"
        );
        assert_eq!(Platform::macos(Arch::Arm64).to_string(), "darwin-arm64");
        assert_eq!(
            Platform::linux(Arch::Arm64, false).expand("a-{arch}/{triple}"),
            "a-arm64/aarch64-unknown-linux-musl"
        );
    }
}
