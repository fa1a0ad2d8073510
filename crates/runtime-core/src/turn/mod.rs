//! Turns: the sans-IO [`machine::TurnMachine`] (inputs in, events and effects out, checkpoint as
//! plain data) and the projection of tool output to the model.

pub mod machine;
pub mod output;

pub use machine::*;
pub use output::{project, OutputBudget, Projection};
