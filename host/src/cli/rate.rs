//! `--rate-limit`: units per second, or a share of what the table serves
//! (`25%`), resolved through DescribeTable.

use aws_sdk_dynamodb::Client;
use dynaslice_host::{HostError, TableConfig};

/// A rate limit as given.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rate {
    /// Units per second.
    Units(u32),
    /// A fraction (above 0, at most 1) of what the table serves.
    Share(f64),
}

/// Which of a table's capacities a share is of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spends {
    Reads,
    Writes,
}

/// `500` (units per second) or `25%` (of the table's capacity).
pub fn parse(text: &str) -> Result<Rate, String> {
    let bad = || format!("{text} is not a number of units per second (500) or a share (25%)");
    match text.strip_suffix('%') {
        Some(percent) => match percent.trim().parse::<f64>() {
            Ok(p) if p > 0.0 && p <= 100.0 => Ok(Rate::Share(p / 100.0)),
            _ => Err(bad()),
        },
        None => match text.parse::<u32>() {
            Ok(n) if n > 0 => Ok(Rate::Units(n)),
            _ => Err(bad()),
        },
    }
}

/// The units per second `rate` allows on `table` (at least 1); a share of
/// a capacity DynamoDB does not describe (an on-demand table with neither
/// a maximum nor a warm throughput) is an error that says what to give.
pub async fn units(
    client: &Client,
    table: &TableConfig,
    rate: Option<Rate>,
    spends: Spends,
) -> Result<Option<u32>, HostError> {
    let share = match rate {
        None => return Ok(None),
        Some(Rate::Units(n)) => return Ok(Some(n)),
        Some(Rate::Share(share)) => share,
    };
    let capacity = dynaslice_host::capacity(client, table).await?;
    let (serves, what) = match spends {
        Spends::Reads => (capacity.read, "read"),
        Spends::Writes => (capacity.write, "write"),
    };
    let serves = serves.ok_or_else(|| {
        HostError::Input(format!(
            "{} does not describe its {what} capacity (an on-demand table with no maximum and \
             no warm throughput): give --rate-limit in units per second",
            table.table
        ))
    })?;
    let units = (serves as f64 * share)
        .floor()
        .clamp(1.0, f64::from(u32::MAX));
    Ok(Some(units as u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_is_units_or_a_share_and_nothing_else() {
        assert_eq!(parse("500"), Ok(Rate::Units(500)));
        assert_eq!(parse("25%"), Ok(Rate::Share(0.25)));
        assert_eq!(parse("100%"), Ok(Rate::Share(1.0)));
        for bad in ["0", "0%", "101%", "-5", "abc", "%", "1.5"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
