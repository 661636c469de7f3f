//! Memory management: TLB shootdown on page reclaim (mm/rmap.c, mm/vmscan.c, arch TLB code).
pub mod reclaim;
pub mod tlb;
