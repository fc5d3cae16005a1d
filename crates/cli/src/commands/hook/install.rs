//! `agentshape hook install|uninstall` (helper h30-install builds this).

use crate::args::{HookInstallArgs, HookUninstallArgs};
use crate::exit::Exit;

pub fn install(_args: &HookInstallArgs) -> anyhow::Result<Exit> {
    anyhow::bail!("hook install: not built yet")
}

pub fn uninstall(_args: &HookUninstallArgs) -> anyhow::Result<Exit> {
    anyhow::bail!("hook uninstall: not built yet")
}
