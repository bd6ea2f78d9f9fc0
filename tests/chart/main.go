// chartcheck: reads the YAML documents `helm template` prints and decodes
// each one into its Kubernetes API type as the API server would, strictly:
// an unknown or misspelled field (case included), a duplicate key, a value
// of the wrong type or a kind it does not know is an error. Then checks
// what decoding cannot see: names, that selectors select, that mounts,
// ports and Services name what exists.
//
//	chartcheck [-json OUT] FILE|-...
//
// Prints "ok KIND/NAME" per object, "not ok KIND/NAME: WHY" per problem;
// exits 1 on any problem, 2 on a usage error. -json writes the decoded
// objects to OUT as one JSON array, for tests to ask what the chart made.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

type object struct {
	kind, name string
	obj        interface{}
}

func main() {
	args, jsonOut := os.Args[1:], ""
	if len(args) >= 2 && args[0] == "-json" {
		jsonOut, args = args[1], args[2:]
	}
	if len(args) < 1 {
		fmt.Fprintln(os.Stderr, "usage: chartcheck [-json OUT] FILE|-...")
		os.Exit(2)
	}
	var objs []object
	bad := 0
	for _, path := range args {
		docs, err := readDocs(path)
		if err != nil {
			fmt.Printf("not ok %s: %v\n", path, err)
			bad++
			continue
		}
		for i, doc := range docs {
			o, err := decode(doc)
			if err != nil {
				fmt.Printf("not ok %s document %d (%s/%s): %v\n",
					path, i+1, o.kind, o.name, err)
				bad++
				continue
			}
			objs = append(objs, o)
		}
	}
	if len(objs) == 0 && bad == 0 {
		fmt.Println("not ok: no objects")
		bad++
	}
	problems := check(objs)
	for _, o := range objs {
		if len(problems[o.kind+"/"+o.name]) == 0 {
			fmt.Printf("ok %s/%s\n", o.kind, o.name)
		}
		for _, p := range problems[o.kind+"/"+o.name] {
			fmt.Printf("not ok %s/%s: %s\n", o.kind, o.name, p)
			bad++
		}
	}
	if jsonOut != "" {
		if err := writeJSON(jsonOut, objs); err != nil {
			fmt.Printf("not ok %s: %v\n", jsonOut, err)
			bad++
		}
	}
	if bad > 0 {
		os.Exit(1)
	}
}

func writeJSON(path string, objs []object) error {
	all := make([]interface{}, len(objs))
	for i, o := range objs {
		all[i] = o.obj
	}
	j, err := json.Marshal(all)
	if err != nil {
		return err
	}
	return os.WriteFile(path, j, 0o644)
}

func readDocs(path string) ([][]byte, error) {
	var r io.Reader = os.Stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	yr := utilyaml.NewYAMLReader(bufio.NewReader(r))
	var docs [][]byte
	for {
		doc, err := yr.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		if !onlyComments(doc) {
			docs = append(docs, doc)
		}
	}
}

func onlyComments(doc []byte) bool {
	for _, line := range bytes.Split(doc, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) > 0 && line[0] != '#' && string(line) != "---" {
			return false
		}
	}
	return true
}

func decode(doc []byte) (object, error) {
	var o object
	j, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return o, err
	}
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(j, &head); err != nil {
		return o, err
	}
	o.kind, o.name = head.Kind, head.Metadata.Name
	if o.obj = newObject(head.APIVersion, head.Kind); o.obj == nil {
		return o, fmt.Errorf("unknown apiVersion/kind %s/%s",
			head.APIVersion, head.Kind)
	}
	strict, err := sigsjson.UnmarshalStrict(j, o.obj,
		sigsjson.DisallowUnknownFields)
	if err != nil {
		return o, err
	}
	if len(strict) > 0 {
		// errors.Join is Go 1.20; Debian 12 has 1.19.
		msg := strict[0].Error()
		for _, e := range strict[1:] {
			msg += "; " + e.Error()
		}
		return o, errors.New(msg)
	}
	return o, nil
}
