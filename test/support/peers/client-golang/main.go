// Program omni-client-golang holds client_golang's side of the package's differential tests.
//
//	omni-client-golang histogram < spec.json   native histograms fed the observations of each
//	                                            spec, then its exemplars (ObserveWithExemplar);
//	                                            prints the gathered families as the delimited
//	                                            protobuf exposition
//	omni-client-golang decode CONTENT-TYPE < body
//	                                            reads a scrape body with expfmt's decoder for
//	                                            that Content-Type; prints each family as JSON
//	                                            (one a line), or the decoder's error and exits 1
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/encoding/protojson"
)

type histogramSpec struct {
	Name    string    `json:"name"`
	Help    string    `json:"help"`
	Buckets []float64 `json:"buckets"`
	Schema  int       `json:"schema"`
	// A negative zero threshold stands for client_golang's "exactly zero" setting.
	ZeroThreshold float64        `json:"zeroThreshold"`
	MaxBuckets    uint32         `json:"maxBuckets"`
	Observations  []float64      `json:"observations"`
	Exemplars     []exemplarSpec `json:"exemplars"`
}

// An observation made within a trace: its exemplar carries the trace's ids.
type exemplarSpec struct {
	Value   float64 `json:"value"`
	TraceID string  `json:"traceId"`
	SpanID  string  `json:"spanId"`
}

// bucketFactor is the smallest factor for which client_golang picks the schema: its
// floor(log2(log2(factor))) would round 2^(2^-schema) itself down to the next finer schema.
func bucketFactor(schema int) float64 {
	return math.Pow(2, math.Pow(2, -float64(schema))) * (1 + 1e-9)
}

func histograms(in io.Reader, out io.Writer) error {
	var specs []histogramSpec
	if err := json.NewDecoder(in).Decode(&specs); err != nil {
		return err
	}
	registry := prometheus.NewPedanticRegistry()
	for _, spec := range specs {
		zero := spec.ZeroThreshold
		if zero == 0 {
			zero = prometheus.NativeHistogramZeroThresholdZero
		}
		histogram := prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:                           spec.Name,
			Help:                           spec.Help,
			Buckets:                        spec.Buckets,
			NativeHistogramBucketFactor:    bucketFactor(spec.Schema),
			NativeHistogramZeroThreshold:   zero,
			NativeHistogramMaxBucketNumber: spec.MaxBuckets,
		})
		if err := registry.Register(histogram); err != nil {
			return err
		}
		for _, value := range spec.Observations {
			histogram.Observe(value)
		}
		for _, exemplar := range spec.Exemplars {
			histogram.(prometheus.ExemplarObserver).ObserveWithExemplar(exemplar.Value, prometheus.Labels{"trace_id": exemplar.TraceID, "span_id": exemplar.SpanID})
		}
	}
	families, err := registry.Gather()
	if err != nil {
		return err
	}
	encoder := expfmt.NewEncoder(out, expfmt.NewFormat(expfmt.TypeProtoDelim))
	for _, family := range families {
		if err := encoder.Encode(family); err != nil {
			return err
		}
	}
	return nil
}

func decode(contentType string, in io.Reader, out io.Writer) error {
	decoder := expfmt.NewDecoder(in, expfmt.Format(contentType))
	for {
		var family dto.MetricFamily
		err := decoder.Decode(&family)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		line, err := protojson.Marshal(&family)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(out, "%s\n", line); err != nil {
			return err
		}
	}
}

func main() {
	var err error
	switch {
	case len(os.Args) == 2 && os.Args[1] == "histogram":
		err = histograms(os.Stdin, os.Stdout)
	case len(os.Args) == 3 && os.Args[1] == "decode":
		err = decode(os.Args[2], os.Stdin, os.Stdout)
	default:
		err = errors.New("usage: omni-client-golang histogram | decode CONTENT-TYPE")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
