package main

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The Prometheus Operator's types are not in k8s.io/api, and its module
// brings a dependency tree of its own: this is the part of
// monitoring.coreos.com/v1 ServiceMonitor the chart may write, decoded as
// strictly as the rest. A field the chart starts using is added here.
type ServiceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              ServiceMonitorSpec `json:"spec"`
}

type ServiceMonitorSpec struct {
	JobLabel          string               `json:"jobLabel,omitempty"`
	Selector          metav1.LabelSelector `json:"selector"`
	NamespaceSelector *struct {
		Any        bool     `json:"any,omitempty"`
		MatchNames []string `json:"matchNames,omitempty"`
	} `json:"namespaceSelector,omitempty"`
	Endpoints []Endpoint `json:"endpoints"`
}

type Endpoint struct {
	Port          string `json:"port,omitempty"`
	Path          string `json:"path,omitempty"`
	Scheme        string `json:"scheme,omitempty"`
	Interval      string `json:"interval,omitempty"`
	ScrapeTimeout string `json:"scrapeTimeout,omitempty"`
	HonorLabels   bool   `json:"honorLabels,omitempty"`
}

// newObject returns an empty object of the Go type the API server would
// decode apiVersion/kind into, or nil for a kind the checker does not
// know (refused: a new kind in the chart gets a line here).
func newObject(apiVersion, kind string) interface{} {
	switch apiVersion + "/" + kind {
	case "v1/Service":
		return &corev1.Service{}
	case "v1/Secret":
		return &corev1.Secret{}
	case "v1/ConfigMap":
		return &corev1.ConfigMap{}
	case "v1/Namespace":
		return &corev1.Namespace{}
	case "v1/PersistentVolumeClaim":
		return &corev1.PersistentVolumeClaim{}
	case "v1/ServiceAccount":
		return &corev1.ServiceAccount{}
	case "apps/v1/StatefulSet":
		return &appsv1.StatefulSet{}
	case "apps/v1/Deployment":
		return &appsv1.Deployment{}
	case "policy/v1/PodDisruptionBudget":
		return &policyv1.PodDisruptionBudget{}
	case "networking.k8s.io/v1/NetworkPolicy":
		return &networkingv1.NetworkPolicy{}
	case "monitoring.coreos.com/v1/ServiceMonitor":
		return &ServiceMonitor{}
	}
	return nil
}
