//! Static routing: each node forwards by a table destination -> outgoing link.
//!
//! Explicit routes from the run description take precedence; every other
//! (node, destination) entry is the first link of a shortest path by
//! propagation delay, ties broken by the lower link index, so routing is
//! deterministic. Routes are resolved once per flow into the list of links the
//! flow's packets traverse; a packet then carries only its hop index.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use crate::error::SpecError;
use crate::spec::RunSpec;

/// Next-hop link of every node toward `dst`, by Dijkstra on reversed links
/// from `dst`. `dist` is in picoseconds of propagation delay.
fn next_hops_toward(dst: usize, n_nodes: usize, links: &[(usize, usize, u64)]) -> Vec<Option<usize>> {
    let mut incoming: Vec<Vec<usize>> = vec![Vec::new(); n_nodes];
    for (i, &(_, d, _)) in links.iter().enumerate() {
        incoming[d].push(i);
    }
    let mut dist = vec![u64::MAX; n_nodes];
    let mut hop: Vec<Option<usize>> = vec![None; n_nodes];
    let mut heap = BinaryHeap::new();
    dist[dst] = 0;
    heap.push(Reverse((0u64, dst)));
    while let Some(Reverse((d, v))) = heap.pop() {
        if d > dist[v] {
            continue;
        }
        for &li in &incoming[v] {
            let (u, _, w) = links[li];
            // Each hop costs at least 1 so zero-delay loops cannot tie.
            let nd = d + w + 1;
            let better = nd < dist[u] || (nd == dist[u] && hop[u].map_or(true, |h| li < h));
            if better {
                let improved = nd < dist[u];
                dist[u] = nd;
                hop[u] = Some(li);
                if improved {
                    heap.push(Reverse((nd, u)));
                }
            }
        }
    }
    hop
}

/// The forward and reverse paths (link indices) of every flow.
pub fn resolve_paths(spec: &RunSpec) -> Result<Vec<[Vec<u32>; 2]>, SpecError> {
    let node_index: HashMap<&str, usize> = spec.nodes.iter().enumerate().map(|(i, n)| (n.name.as_str(), i)).collect();
    let link_index: HashMap<&str, usize> = spec.links.iter().enumerate().map(|(i, l)| (l.name.as_str(), i)).collect();
    let links: Vec<(usize, usize, u64)> = spec
        .links
        .iter()
        .map(|l| (node_index[l.src.as_str()], node_index[l.dst.as_str()], crate::sim::time::from_secs(l.delay)))
        .collect();
    let mut explicit: HashMap<(usize, usize), usize> = HashMap::new();
    for (i, r) in spec.routes.iter().enumerate() {
        let li = link_index[r.link.as_str()];
        let node = node_index[r.node.as_str()];
        if links[li].0 != node {
            return Err(SpecError::new(
                format!("routes[{i}].link"),
                format!("link {:?} does not leave node {:?}", r.link, r.node),
            ));
        }
        explicit.insert((node, node_index[r.dst.as_str()]), li);
    }
    let n = spec.nodes.len();
    let mut tables: HashMap<usize, Vec<Option<usize>>> = HashMap::new();
    let mut path = |src: usize, dst: usize, field: String| -> Result<Vec<u32>, SpecError> {
        let table = tables.entry(dst).or_insert_with(|| next_hops_toward(dst, n, &links));
        let mut out = Vec::new();
        let mut at = src;
        while at != dst {
            let li = match explicit.get(&(at, dst)) {
                Some(&li) => li,
                None => table[at].ok_or_else(|| {
                    SpecError::new(
                        field.clone(),
                        format!("no route from {:?} to {:?} (stuck at {:?})", spec.nodes[src].name, spec.nodes[dst].name, spec.nodes[at].name),
                    )
                })?,
            };
            out.push(li as u32);
            if out.len() > n + spec.routes.len() {
                return Err(SpecError::new(
                    field,
                    format!("routing loop between {:?} and {:?}", spec.nodes[src].name, spec.nodes[dst].name),
                ));
            }
            at = links[li].1;
        }
        if out.len() > u16::MAX as usize {
            return Err(SpecError::new(field, "path longer than 65535 hops".into()));
        }
        Ok(out)
    };
    let mut result = Vec::with_capacity(spec.flows.len());
    for (i, f) in spec.flows.iter().enumerate() {
        let s = node_index[f.src.as_str()];
        let d = node_index[f.dst.as_str()];
        let fwd = path(s, d, format!("flows[{i}]"))?;
        let rev = path(d, s, format!("flows[{i}]"))?;
        result.push([fwd, rev]);
    }
    Ok(result)
}
