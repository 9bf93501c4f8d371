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
/// from `dst`. `dist` is in picoseconds of propagation delay, summed in
/// u128: a path of many links of up to 2^61 ps each overflows a u64, and
/// a wrapped (or saturated) sum would pick the wrong shortest path.
fn next_hops_toward(dst: usize, incoming: &[Vec<usize>], links: &[(usize, usize, u64)]) -> Vec<Option<usize>> {
    let n_nodes = incoming.len();
    let mut dist = vec![u128::MAX; n_nodes];
    let mut hop: Vec<Option<usize>> = vec![None; n_nodes];
    let mut heap = BinaryHeap::new();
    dist[dst] = 0;
    heap.push(Reverse((0u128, dst)));
    while let Some(Reverse((d, v))) = heap.pop() {
        if d > dist[v] {
            continue;
        }
        for &li in &incoming[v] {
            let (u, _, w) = links[li];
            // Each hop costs at least 1 so zero-delay loops cannot tie.
            let nd = d + w as u128 + 1;
            let better = nd < dist[u] || (nd == dist[u] && hop[u].is_none_or(|h| li < h));
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
    let mut incoming: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, &(_, d, _)) in links.iter().enumerate() {
        incoming[d].push(i);
    }
    // The paths asked for, grouped by the destination whose next-hop table
    // they need, so one table at a time is alive (a table per destination for
    // 10,000 hosts would take gigabytes).
    //
    // Without explicit routes, the path to a node with a single incoming link
    // (a host on its access link) is the path to that link's source followed
    // by the link: every path to the node ends with that link, and the
    // next-hop choices (shortest distance, ties to the lower link index)
    // elsewhere are those toward the link's source, whose distances differ
    // by a constant. So a dumbbell with N hosts needs two tables, not 2N.
    let leaf_of = |dst: usize| -> Option<(usize, usize)> {
        match incoming[dst].as_slice() {
            &[li] if spec.routes.is_empty() => Some((li, links[li].0)),
            _ => None,
        }
    };
    // (flow, direction, src, table destination, links appended after the table's path).
    let mut asks: Vec<(usize, usize, usize, usize, Vec<usize>)> = Vec::with_capacity(2 * spec.flows.len());
    for (i, f) in spec.flows.iter().enumerate() {
        let s = node_index[f.src.as_str()];
        let d = node_index[f.dst.as_str()];
        for (dir, (src, dst)) in [(s, d), (d, s)].into_iter().enumerate() {
            let (mut to, mut tail) = (dst, Vec::new());
            while to != src && tail.len() <= n {
                match leaf_of(to) {
                    Some((li, from)) => {
                        tail.push(li);
                        to = from;
                    }
                    None => break,
                }
            }
            if tail.len() > n {
                // A cycle of single-entry nodes that never reaches src: let
                // the full search report it.
                to = dst;
                tail.clear();
            }
            tail.reverse();
            asks.push((i, dir, src, to, tail));
        }
    }
    asks.sort_by_key(|a| a.3);
    let mut result: Vec<[Vec<u32>; 2]> = vec![[Vec::new(), Vec::new()]; spec.flows.len()];
    let mut first_err: Option<((usize, usize), SpecError)> = None;
    let mut k = 0;
    while k < asks.len() {
        let to = asks[k].3;
        let table = next_hops_toward(to, &incoming, &links);
        while k < asks.len() && asks[k].3 == to {
            let (i, dir, src, _, ref tail) = asks[k];
            k += 1;
            let (s, d) = (spec.flows[i].src.as_str(), spec.flows[i].dst.as_str());
            let (src_name, dst_name) = if dir == 0 { (s, d) } else { (d, s) };
            let field = format!("flows[{i}]");
            let walk = || -> Result<Vec<u32>, SpecError> {
                let mut out = Vec::new();
                let mut at = src;
                while at != to {
                    let li = match explicit.get(&(at, to)) {
                        Some(&li) => li,
                        None => table[at].ok_or_else(|| {
                            SpecError::new(
                                field.clone(),
                                format!(
                                    "no route from {src_name:?} to {dst_name:?} (stuck at {:?})",
                                    spec.nodes[at].name
                                ),
                            )
                        })?,
                    };
                    out.push(li as u32);
                    if out.len() > n + spec.routes.len() {
                        return Err(SpecError::new(
                            field.clone(),
                            format!("routing loop between {src_name:?} and {dst_name:?}"),
                        ));
                    }
                    at = links[li].1;
                }
                out.extend(tail.iter().map(|&li| li as u32));
                if out.len() > u16::MAX as usize {
                    return Err(SpecError::new(field.clone(), "path longer than 65535 hops".into()));
                }
                Ok(out)
            };
            match walk() {
                Ok(p) => result[i][dir] = p,
                // Report the problem of the first flow (and direction), as if
                // the flows were resolved in order.
                Err(e) => {
                    if first_err.as_ref().is_none_or(|(key, _)| (i, dir) < *key) {
                        first_err = Some(((i, dir), e));
                    }
                }
            }
        }
    }
    if let Some((_, e)) = first_err {
        return Err(e);
    }
    Ok(result)
}
