//! x
use crate::args::OpsArgs;
use crate::exit::Exit;
pub fn run(_a: &OpsArgs) -> anyhow::Result<Exit> {
    Ok(Exit::Ok)
}
