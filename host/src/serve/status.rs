//! The HTTP status the server answers each category of error with: a
//! decision of this server's, not of the I/O-free core's catalogue, which
//! says only who can fix what.

use axum::http::StatusCode;
use dynaslice_core::Category;

/// The status of an error of `category`; `None` for [`Category::Client`],
/// which no server answers.
pub fn status_of(category: Category) -> Option<StatusCode> {
    Some(match category {
        Category::Input => StatusCode::BAD_REQUEST,
        Category::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        Category::Stored | Category::Failure => StatusCode::INTERNAL_SERVER_ERROR,
        Category::Conflict => StatusCode::CONFLICT,
        Category::NotFound => StatusCode::NOT_FOUND,
        Category::Forbidden => StatusCode::FORBIDDEN,
        Category::Unauthenticated => StatusCode::UNAUTHORIZED,
        Category::Misdirected => StatusCode::MISDIRECTED_REQUEST,
        Category::UnsupportedMedia => StatusCode::UNSUPPORTED_MEDIA_TYPE,
        Category::Timeout => StatusCode::REQUEST_TIMEOUT,
        Category::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        Category::Client => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use dynaslice_core::Code;

    #[test]
    fn only_client_codes_have_no_status() {
        for code in Code::ALL {
            let status = status_of(code.category());
            assert_eq!(
                status.is_none(),
                code.category() == Category::Client,
                "{code}"
            );
        }
        assert_eq!(
            status_of(Code::ChunkDigestMismatch.category()),
            Some(StatusCode::INTERNAL_SERVER_ERROR)
        );
        assert_eq!(
            status_of(Code::TokenRequired.category()),
            Some(StatusCode::UNAUTHORIZED)
        );
        assert_eq!(
            status_of(Code::Conflict.category()),
            Some(StatusCode::CONFLICT)
        );
    }
}
