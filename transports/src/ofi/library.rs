//! Finding libfabric at run time: `dlopen("libfabric.so.1")` and the handful of functions it
//! really exports, bound with `dlvsym` at the symbol versions whose `struct fi_info` layout
//! [`super::ffi`] declares (`FABRIC_1.3`). A newer library's default `fi_getinfo` returns a
//! grown `fi_info`; the versioned symbol keeps the layout this build knows, which is what lets
//! one fabbench binary run against any libfabric from 1.5 on, and a build machine need none.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::OnceLock;

use super::ffi::{FiFabricAttr, FiInfo, FidFabric};

type GetInfoFn = unsafe extern "C" fn(
    u32,
    *const c_char,
    *const c_char,
    u64,
    *const FiInfo,
    *mut *mut FiInfo,
) -> c_int;
type DupInfoFn = unsafe extern "C" fn(*const FiInfo) -> *mut FiInfo;
type FreeInfoFn = unsafe extern "C" fn(*mut FiInfo);
type FabricFn = unsafe extern "C" fn(*mut FiFabricAttr, *mut *mut FidFabric, *mut c_void) -> c_int;
type VersionFn = unsafe extern "C" fn() -> u32;
type StrErrorFn = unsafe extern "C" fn(c_int) -> *const c_char;
type ToStrFn = unsafe extern "C" fn(*const c_void, c_int) -> *mut c_char;

/// The library's soname: every libfabric from 1.0 to 2.x keeps it.
pub const SONAME: &str = "libfabric.so.1";
/// Names another libfabric to load (a path, or a name the loader searches for): a build of
/// one's own beside the system's.
pub const LIBRARY_ENV: &str = "FABBENCH_LIBFABRIC";
/// The oldest libfabric fabbench drives: the memory registration bits it honours arrived in 1.5.
const OLDEST: (u32, u32) = (1, 5);
/// The API version fabbench asks for, or the library's own if older.
const API: (u32, u32) = (1, 17);

/// libfabric, loaded.
pub struct Library {
    pub getinfo: GetInfoFn,
    pub dupinfo: DupInfoFn,
    pub freeinfo: FreeInfoFn,
    pub fabric: FabricFn,
    strerror: StrErrorFn,
    tostr: ToStrFn,
    /// (major, minor) as the library reports itself.
    pub version: (u32, u32),
}

impl Library {
    /// The API version to pass to `fi_getinfo`.
    pub fn api_version(&self) -> u32 {
        let (maj, min) = if self.version < API {
            self.version
        } else {
            API
        };
        super::ffi::fi_version(maj, min)
    }

    /// libfabric's text for a (positive) error number.
    pub fn strerror(&self, errnum: isize) -> String {
        // SAFETY: fi_strerror returns a static string for any number.
        let p = unsafe { (self.strerror)(errnum.unsigned_abs() as c_int) };
        if p.is_null() {
            format!("error {errnum}")
        } else {
            // SAFETY: a NUL-terminated static string.
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        }
    }

    /// `fi_tostr` of a value of type `kind`, copied out at once (the library's buffer is reused).
    ///
    /// # Safety
    /// `value` must point to a value of the C type `kind` names.
    pub unsafe fn tostr(&self, value: *const c_void, kind: c_int) -> String {
        let p = (self.tostr)(value, kind);
        if p.is_null() {
            String::new()
        } else {
            CStr::from_ptr(p).to_string_lossy().trim().to_string()
        }
    }

    pub fn version_text(&self) -> String {
        format!("libfabric {}.{}", self.version.0, self.version.1)
    }
}

/// libfabric, loaded once per process (and never unloaded: providers start threads), or why it
/// cannot be.
pub fn library() -> Result<&'static Library, String> {
    static LIB: OnceLock<Result<Library, String>> = OnceLock::new();
    LIB.get_or_init(load).as_ref().map_err(Clone::clone)
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn load() -> Result<Library, String> {
    let chosen = std::env::var(LIBRARY_ENV).ok().filter(|v| !v.is_empty());
    let path = chosen.clone().unwrap_or_else(|| SONAME.to_string());
    let name = CString::new(path.clone()).map_err(|_| format!("{LIBRARY_ENV} holds a NUL byte"))?;
    // SAFETY: dlopen of a library by name; its constructors run as for any linked library.
    let handle = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if handle.is_null() {
        return Err(match chosen {
            Some(p) => format!("{LIBRARY_ENV}={p} could not be loaded"),
            None => format!(
                "{SONAME} not found (install libfabric, e.g. Debian's libfabric1, or name it with {LIBRARY_ENV})"
            ),
        });
    }
    let sym = |name: &str, version: &str| -> Result<*mut c_void, String> {
        let n = CString::new(name).expect("no NUL");
        let v = CString::new(version).expect("no NUL");
        // SAFETY: looks a symbol up in a library we hold open.
        let p = unsafe { libc::dlvsym(handle, n.as_ptr(), v.as_ptr()) };
        if p.is_null() {
            Err(format!(
                "{SONAME} has no {name}@{version}: older than libfabric 1.5"
            ))
        } else {
            Ok(p)
        }
    };
    // SAFETY: each symbol has the C signature its type declares (libfabric's headers).
    let lib = unsafe {
        Library {
            getinfo: std::mem::transmute::<*mut c_void, GetInfoFn>(sym(
                "fi_getinfo",
                "FABRIC_1.3",
            )?),
            dupinfo: std::mem::transmute::<*mut c_void, DupInfoFn>(sym(
                "fi_dupinfo",
                "FABRIC_1.3",
            )?),
            freeinfo: std::mem::transmute::<*mut c_void, FreeInfoFn>(sym(
                "fi_freeinfo",
                "FABRIC_1.3",
            )?),
            fabric: std::mem::transmute::<*mut c_void, FabricFn>(sym("fi_fabric", "FABRIC_1.1")?),
            strerror: std::mem::transmute::<*mut c_void, StrErrorFn>(sym(
                "fi_strerror",
                "FABRIC_1.0",
            )?),
            tostr: std::mem::transmute::<*mut c_void, ToStrFn>(sym("fi_tostr", "FABRIC_1.0")?),
            version: {
                let f =
                    std::mem::transmute::<*mut c_void, VersionFn>(sym("fi_version", "FABRIC_1.0")?);
                let v = f();
                (v >> 16, v & 0xffff)
            },
        }
    };
    if lib.version < OLDEST {
        return Err(format!(
            "{} is older than libfabric {}.{}",
            lib.version_text(),
            OLDEST.0,
            OLDEST.1
        ));
    }
    Ok(lib)
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn load() -> Result<Library, String> {
    Err("libfabric is loaded with glibc's dlvsym, which this build's platform lacks".into())
}
