// HdrHistogram's own reading of fabbench's .hlog files, for tests/it/run/hdrhistogram_java.rs.
//
// For each .hlog named on the command line: reads it with HistogramLogReader, adds its
// intervals up, and prints a section
//
//   ## FILE
//   start SECONDS                      the reader's StartTime (seconds since the epoch)
//   interval START_MS END_MS MAX       each interval's timestamps and maximum value
//   percentile P VALUE                 getValueAtPercentile(P) for P = 50, 90, 99, 99.9
//   (outputPercentileDistribution(out, 5, 1000.0) of the sum)
//
// Run with HdrHistogram's jar on the class path: compiled with javac, or launched as a
// single source file (java -cp JAR HdrReference.java FILE...).

import java.io.PrintStream;

import org.HdrHistogram.EncodableHistogram;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogReader;

public class HdrReference {
    public static void main(String[] args) throws Exception {
        PrintStream out = System.out;
        for (String file : args) {
            HistogramLogReader reader = new HistogramLogReader(file);
            out.println("## " + file);
            Histogram sum = null;
            EncodableHistogram e;
            while ((e = reader.nextIntervalHistogram()) != null) {
                Histogram h = (Histogram) e;
                out.println("interval " + h.getStartTimeStamp() + " " + h.getEndTimeStamp()
                        + " " + h.getMaxValue());
                if (sum == null) {
                    sum = h.copy();
                } else {
                    sum.add(h);
                }
            }
            out.println("start " + reader.getStartTimeSec());
            reader.close();
            if (sum == null) {
                continue;
            }
            for (double p : new double[] {50.0, 90.0, 99.0, 99.9}) {
                out.println("percentile " + p + " " + sum.getValueAtPercentile(p));
            }
            sum.outputPercentileDistribution(out, 5, 1000.0);
        }
        out.flush();
    }
}
