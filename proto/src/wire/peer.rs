//! Who is at the other end of the socket: the daemon serves, and the client talks to, only
//! the same user. On Unix that is the peer's uid (`SO_PEERCRED`, `getpeereid`); on Windows
//! the owner SID of the peer's process (the pipe gives its pid), and the pipe itself is
//! created with a DACL granting access to the user's SID alone ([`pipe_sddl`]).

use interprocess::local_socket::traits::StreamCommon;
#[cfg(windows)]
use std::io;

/// Someone other than this user at the other end.
#[derive(Debug)]
pub struct Stranger {
    /// The peer's pid, when known.
    pub pid: Option<u32>,
    /// Who they are instead (`uid 1001`, `another account`), or why that is unknown.
    pub who: String,
}

impl std::fmt::Display for Stranger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.who)
    }
}

/// Checks that the peer of `stream` runs as this process's user.
#[cfg(unix)]
pub fn same_user(stream: &impl StreamCommon) -> Result<(), Stranger> {
    let creds = stream
        .peer_creds()
        .map_err(|e| Stranger { pid: None, who: format!("a peer whose credentials cannot be read ({e})") })?;
    let pid = creds.pid().and_then(|p| u32::try_from(p).ok());
    let me = super::paths::euid();
    match creds.euid() {
        Some(uid) if uid == me => Ok(()),
        Some(uid) => Err(Stranger { pid, who: format!("uid {uid}, not you (uid {me})") }),
        None => Err(Stranger { pid, who: "a peer of unknown uid".into() }),
    }
}

/// Checks that the peer of `stream` runs as this process's user.
#[cfg(windows)]
pub fn same_user(stream: &impl StreamCommon) -> Result<(), Stranger> {
    let pid = stream
        .peer_creds()
        .ok()
        .and_then(|c| c.pid())
        .ok_or_else(|| Stranger { pid: None, who: "a peer whose process id cannot be read".into() })?;
    match windows::process_is_mine(pid) {
        Ok(true) => Ok(()),
        Ok(false) => Err(Stranger { pid: Some(pid), who: "a process of another account".into() }),
        Err(e) => Err(Stranger { pid: Some(pid), who: format!("a process whose account cannot be read ({e})") }),
    }
}

/// The named pipe's security descriptor, in SDDL: a protected DACL with one entry, full
/// access for the current user's SID. Nobody else (not Administrators, not SYSTEM, not
/// "Everyone", which the default DACL lets read) may open it.
#[cfg(windows)]
pub fn pipe_sddl() -> io::Result<String> {
    Ok(format!("D:P(A;;GA;;;{})", windows::my_sid_string()?))
}

/// Gives the directory `dir` a protected DACL with one inheritable entry, full access for the
/// current user's SID: what is created in it (the journal, its log) is the user's alone, as
/// mode 0700 makes it on Unix, whatever `%LOCALAPPDATA%`'s own entries allow.
#[cfg(windows)]
pub fn restrict_dir_to_me(dir: &std::path::Path) -> io::Result<()> {
    windows::set_sddl(dir, &format!("D:P(A;OICI;FA;;;{})", windows::my_sid_string()?))
}

/// The DACL of `path` in SDDL, for tests.
#[cfg(windows)]
pub fn dacl_sddl(path: &std::path::Path) -> io::Result<String> {
    windows::dacl_sddl(path)
}

#[cfg(windows)]
mod windows {
    //! The few Win32 calls the checks need: the token user SID of a process.
    use std::io;
    use windows_sys::Win32::Foundation::{CloseHandle, LocalFree, HANDLE};
    use windows_sys::Win32::Security::Authorization::ConvertSidToStringSidW;
    use windows_sys::Win32::Security::{EqualSid, GetTokenInformation, TokenUser, TOKEN_QUERY, TOKEN_USER};
    use windows_sys::Win32::System::Threading::{
        GetCurrentProcess, OpenProcess, OpenProcessToken, PROCESS_QUERY_LIMITED_INFORMATION,
    };

    /// A handle closed on drop.
    struct Handle(HANDLE);
    impl Drop for Handle {
        fn drop(&mut self) {
            // SAFETY: the handle was opened by us and is closed once.
            unsafe { CloseHandle(self.0) };
        }
    }

    /// The TOKEN_USER of a process, in a buffer aligned for it.
    struct TokenUserBuf(Vec<u64>);
    impl TokenUserBuf {
        fn sid(&self) -> *mut core::ffi::c_void {
            // SAFETY: the buffer was filled by GetTokenInformation(TokenUser), which starts
            // with a TOKEN_USER; the u64 storage keeps it aligned.
            unsafe { (*(self.0.as_ptr() as *const TOKEN_USER)).User.Sid }
        }
    }

    fn token_user(process: HANDLE) -> io::Result<TokenUserBuf> {
        let mut token: HANDLE = std::ptr::null_mut();
        // SAFETY: `process` is a valid process handle; `token` receives a new handle.
        if unsafe { OpenProcessToken(process, TOKEN_QUERY, &mut token) } == 0 {
            return Err(io::Error::last_os_error());
        }
        let token = Handle(token);
        let mut len = 0u32;
        // SAFETY: asking for the size only (null buffer, length 0).
        unsafe { GetTokenInformation(token.0, TokenUser, std::ptr::null_mut(), 0, &mut len) };
        if len == 0 {
            return Err(io::Error::last_os_error());
        }
        let mut buf = TokenUserBuf(vec![0u64; (len as usize).div_ceil(8)]);
        // SAFETY: the buffer holds `len` bytes, as asked for.
        if unsafe { GetTokenInformation(token.0, TokenUser, buf.0.as_mut_ptr().cast(), len, &mut len) } == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(buf)
    }

    fn mine() -> io::Result<TokenUserBuf> {
        // SAFETY: the pseudo-handle of the current process needs no closing.
        token_user(unsafe { GetCurrentProcess() })
    }

    /// Whether process `pid` runs as the same user (token user SID) as this one.
    pub fn process_is_mine(pid: u32) -> io::Result<bool> {
        // SAFETY: OpenProcess returns null on failure, checked below.
        let process = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
        if process.is_null() {
            return Err(io::Error::last_os_error());
        }
        let process = Handle(process);
        let (theirs, ours) = (token_user(process.0)?, mine()?);
        // SAFETY: both SIDs point into live buffers filled by GetTokenInformation.
        Ok(unsafe { EqualSid(theirs.sid(), ours.sid()) } != 0)
    }

    /// `path` as a NUL-terminated wide string.
    fn wide(path: &std::path::Path) -> Vec<u16> {
        use std::os::windows::ffi::OsStrExt;
        path.as_os_str().encode_wide().chain(Some(0)).collect()
    }

    /// Sets the DACL of `path` from `sddl` (its DACL part, protected from inheritance).
    pub fn set_sddl(path: &std::path::Path, sddl: &str) -> io::Result<()> {
        use windows_sys::Win32::Security::Authorization::{
            ConvertStringSecurityDescriptorToSecurityDescriptorW, SDDL_REVISION_1,
        };
        use windows_sys::Win32::Security::{
            SetFileSecurityW, DACL_SECURITY_INFORMATION, PROTECTED_DACL_SECURITY_INFORMATION, PSECURITY_DESCRIPTOR,
        };
        let text: Vec<u16> = sddl.encode_utf16().chain(Some(0)).collect();
        let mut sd: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
        // SAFETY: `text` is NUL-terminated; on success `sd` is a LocalAlloc'd descriptor.
        let made = unsafe {
            ConvertStringSecurityDescriptorToSecurityDescriptorW(
                text.as_ptr(),
                SDDL_REVISION_1,
                &mut sd,
                std::ptr::null_mut(),
            )
        };
        if made == 0 {
            return Err(io::Error::last_os_error());
        }
        let name = wide(path);
        // SAFETY: `name` is NUL-terminated and `sd` a valid descriptor, freed once after.
        let set = unsafe {
            SetFileSecurityW(name.as_ptr(), DACL_SECURITY_INFORMATION | PROTECTED_DACL_SECURITY_INFORMATION, sd)
        };
        let err = io::Error::last_os_error();
        // SAFETY: allocated by ConvertStringSecurityDescriptorToSecurityDescriptorW.
        unsafe { LocalFree(sd) };
        if set == 0 {
            return Err(err);
        }
        Ok(())
    }

    /// The DACL of `path`, in SDDL.
    pub fn dacl_sddl(path: &std::path::Path) -> io::Result<String> {
        use windows_sys::Win32::Security::Authorization::{
            ConvertSecurityDescriptorToStringSecurityDescriptorW, GetNamedSecurityInfoW, SDDL_REVISION_1,
            SE_FILE_OBJECT,
        };
        use windows_sys::Win32::Security::{DACL_SECURITY_INFORMATION, PSECURITY_DESCRIPTOR};
        let name = wide(path);
        let mut sd: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
        // SAFETY: `name` is NUL-terminated; on success `sd` is LocalAlloc'd, freed below.
        let got = unsafe {
            GetNamedSecurityInfoW(
                name.as_ptr(),
                SE_FILE_OBJECT,
                DACL_SECURITY_INFORMATION,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &mut sd,
            )
        };
        if got != 0 {
            return Err(io::Error::from_raw_os_error(got as i32));
        }
        let mut text: *mut u16 = std::ptr::null_mut();
        // SAFETY: `sd` is valid; on success `text` is a LocalAlloc'd NUL-terminated string.
        let made = unsafe {
            ConvertSecurityDescriptorToStringSecurityDescriptorW(
                sd,
                SDDL_REVISION_1,
                DACL_SECURITY_INFORMATION,
                &mut text,
                std::ptr::null_mut(),
            )
        };
        let err = io::Error::last_os_error();
        // SAFETY: allocated by GetNamedSecurityInfoW.
        unsafe { LocalFree(sd) };
        if made == 0 {
            return Err(err);
        }
        // SAFETY: `text` is NUL-terminated, read up to the NUL, then freed once.
        let s = unsafe {
            let len = (0..).take_while(|&i| *text.add(i) != 0).count();
            let s = String::from_utf16_lossy(std::slice::from_raw_parts(text, len));
            LocalFree(text.cast());
            s
        };
        Ok(s)
    }

    /// This process's user SID as a string (`S-1-5-21-…`).
    pub fn my_sid_string() -> io::Result<String> {
        let me = mine()?;
        let mut text: *mut u16 = std::ptr::null_mut();
        // SAFETY: the SID is valid; on success `text` is a LocalAlloc'd NUL-terminated string.
        if unsafe { ConvertSidToStringSidW(me.sid(), &mut text) } == 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `text` is NUL-terminated, read up to the NUL, then freed once.
        let s = unsafe {
            let len = (0..).take_while(|&i| *text.add(i) != 0).count();
            let s = String::from_utf16_lossy(std::slice::from_raw_parts(text, len));
            LocalFree(text.cast());
            s
        };
        Ok(s)
    }
}
