//! The outputs besides the printed table: the rows as JSON (`--json`) and
//! the plot of fill bandwidth against element size (`--plot`).

use crate::harness::{Bench, Row};

/// Writes every row to `path` as JSON.
pub fn write_json(path: &str, b: &Bench, device: &str) {
    let rows: Vec<String> = b.rows.iter().map(|r| format!(
        "  {{\"group\": \"{}\", \"name\": \"{}\", \"unit\": \"{}\", \"ours\": {:.4}, \"raw\": {:.4}, \"raw_call\": \"{}\", \"ratio\": {:.4}{}}}",
        r.group, r.name.trim(), r.unit, r.ours, r.raw, r.raw_name, r.ratio(),
        r.size.map(|s| format!(", \"element_size\": {s}")).unwrap_or_default()
    )).collect();
    std::fs::write(
        path,
        format!(
            "{{\"device\": \"{}\", \"rows\": [\n{}\n]}}\n",
            device,
            rows.join(",\n")
        ),
    )
    .unwrap();
}

/// Plots the fill rows (bandwidth against element size) into an SVG file.
pub fn plot(path: &str, device: &str, rows: &[Row]) -> Result<(), Box<dyn std::error::Error>> {
    use plotters::prelude::*;
    let fills: Vec<&Row> = rows.iter().filter(|r| r.size.is_some()).collect();
    let max = fills.iter().map(|r| r.ours.max(r.raw)).fold(0.0, f64::max) * 1.15;
    let root = SVGBackend::new(path, (900, 520)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("fill bandwidth vs element size — {device}"),
            ("sans-serif", 22),
        )
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d((1f64..5000f64).log_scale(), 0f64..max)?;
    chart
        .configure_mesh()
        .x_desc("element size (bytes, log scale)")
        .y_desc("GB/s (1 GiB buffer)")
        .draw()?;
    let pts = |f: fn(&Row) -> f64| {
        fills
            .iter()
            .map(move |r| (r.size.unwrap() as f64, f(r)))
            .collect::<Vec<_>>()
    };
    chart
        .draw_series(LineSeries::new(pts(|r| r.ours), BLUE.stroke_width(2)))?
        .label("cuda-mem fill")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE));
    chart.draw_series(
        pts(|r| r.ours)
            .into_iter()
            .map(|p| Circle::new(p, 4, BLUE.filled())),
    )?;
    chart
        .draw_series(LineSeries::new(pts(|r| r.raw), RED.stroke_width(2)))?
        .label("cuMemsetD32Async (same run)")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], RED));
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::LowerRight)
        .draw()?;
    root.present()?;
    Ok(())
}
