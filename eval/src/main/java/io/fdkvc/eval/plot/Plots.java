package io.fdkvc.eval.plot;

import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * PNG charts drawn with XChart, headless. The one entry point for every plot of a report, so that
 * all of them look alike; {@link #lines} is also the hook for plots other packages add (the real
 * dialogue evaluation's recall against budget).
 */
public final class Plots {
    public static final int WIDTH = 900;
    public static final int HEIGHT = 520;

    /** Fixed colours by series order, so that a policy keeps its colour across the plots of a report. */
    private static final Color[] PALETTE = {
            new Color(0xD62728), new Color(0x1F77B4), new Color(0x2CA02C), new Color(0xFF7F0E), new Color(0x9467BD),
            new Color(0x8C564B), new Color(0xE377C2), new Color(0x7F7F7F), new Color(0xBCBD22), new Color(0x17BECF),
            new Color(0x393B79), new Color(0x637939), new Color(0x8C6D31), new Color(0x843C39), new Color(0x7B4173)};

    static {
        System.setProperty("java.awt.headless", "true"); // servers and CI have no display
    }

    private Plots() {}

    /**
     * A line chart: one series per map entry (in map order), sharing {@code x}; NaN y values are
     * left out of their series. {@code yRange} null means automatic.
     */
    public static void lines(Path file, String title, String xLabel, String yLabel, double[] x,
                             Map<String, double[]> series, double[] yRange) {
        XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT).title(title).xAxisTitle(xLabel).yAxisTitle(yLabel).build();
        style(chart.getStyler());
        chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideE);
        chart.getStyler().setMarkerSize(4);
        if (yRange != null) {
            chart.getStyler().setYAxisMin(yRange[0]);
            chart.getStyler().setYAxisMax(yRange[1]);
        }
        int k = 0;
        for (Map.Entry<String, double[]> e : series.entrySet()) {
            double[] y = e.getValue();
            int n = 0;
            for (int i = 0; i < x.length; i++) if (!Double.isNaN(y[i])) n++;
            if (n == 0) {
                k++;
                continue;
            }
            double[] xs = new double[n], ys = new double[n];
            n = 0;
            for (int i = 0; i < x.length; i++) {
                if (Double.isNaN(y[i])) continue;
                xs[n] = x[i];
                ys[n++] = y[i];
            }
            XYSeries s = chart.addSeries(e.getKey(), xs, ys);
            s.setLineColor(PALETTE[k % PALETTE.length]);
            s.setMarkerColor(PALETTE[k % PALETTE.length]);
            s.setMarker(SeriesMarkers.CIRCLE);
            s.setLineWidth(k == 0 ? 3f : 1.6f); // the first series (FD-KVC in every report) stands out
            if (k >= PALETTE.length) s.setLineStyle(new BasicStroke(1.6f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[]{6f, 4f}, 0f));
            k++;
        }
        save(chart, file);
    }

    /**
     * A dot chart with error bars: one dot per category (e.g. a metric per policy with its
     * interval). Dots, not bars, because the axis spans the data rather than starting at 0.
     */
    public static void bars(Path file, String title, String yLabel, List<String> categories, double[] values,
                            double[] errorLow, double[] errorHigh) {
        CategoryChart chart = new CategoryChartBuilder().width(WIDTH).height(HEIGHT).title(title).yAxisTitle(yLabel).build();
        style(chart.getStyler());
        chart.getStyler().setLegendVisible(false);
        chart.getStyler().setDefaultSeriesRenderStyle(org.knowm.xchart.CategorySeries.CategorySeriesRenderStyle.Scatter);
        chart.getStyler().setMarkerSize(9);
        chart.getStyler().setXAxisLabelRotation(35);
        chart.getStyler().setErrorBarsColor(Color.BLACK);
        // bars from 0 would hide differences of a few percent: the axis spans the intervals
        double lo = Double.POSITIVE_INFINITY, hi = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < values.length; i++) {
            if (Double.isNaN(values[i])) continue;
            lo = Math.min(lo, errorLow[i]);
            hi = Math.max(hi, errorHigh[i]);
        }
        if (lo < hi) {
            double pad = 0.1 * (hi - lo);
            chart.getStyler().setYAxisMin(lo - pad);
            chart.getStyler().setYAxisMax(hi + pad);
        }
        // XChart draws symmetric error bars: use the larger half-width, and say so in the title's caption
        double[] err = new double[values.length];
        for (int i = 0; i < values.length; i++) err[i] = Math.max(errorHigh[i] - values[i], values[i] - errorLow[i]);
        org.knowm.xchart.CategorySeries s = chart.addSeries("value", categories, toList(values), toList(err));
        s.setMarker(SeriesMarkers.CIRCLE);
        s.setMarkerColor(PALETTE[1]);
        save(chart, file);
    }

    private static List<Double> toList(double[] a) {
        Double[] b = new Double[a.length];
        for (int i = 0; i < a.length; i++) b[i] = Double.isNaN(a[i]) ? 0.0 : a[i];
        return List.of(b);
    }

    private static void style(Styler st) {
        st.setChartBackgroundColor(Color.WHITE);
        st.setPlotBackgroundColor(Color.WHITE);
        if (st instanceof org.knowm.xchart.style.AxesChartStyler a) a.setPlotGridLinesColor(new Color(0xDDDDDD));
        st.setChartTitleBoxVisible(false);
        st.setLegendBorderColor(Color.WHITE);
        st.setAntiAlias(true);
    }

    private static void save(org.knowm.xchart.internal.chartpart.Chart<?, ?> chart, Path file) {
        try (OutputStream out = Files.newOutputStream(file)) {
            BitmapEncoder.saveBitmap(chart, out, BitmapEncoder.BitmapFormat.PNG);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }
}
