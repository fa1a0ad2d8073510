//! The transports' cap on an `upload_package` body (the HTTP server refuses a larger body before
//! reading it; the desktop's raw-body invoke is held to it too). The upload itself is the app
//! center's (`center::uploads`: a private file under `<data>/staging/uploads/`, bounded again by
//! the package size limit, used once by a review).

/// Largest body `upload_package` accepts on either transport.
pub const MAX_UPLOAD_BYTES: usize = 256 * 1024 * 1024;
