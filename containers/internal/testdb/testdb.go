// Package testdb starts throwaway database servers for Plenum's own tests,
// through testcontainers, where a Docker engine answers. Each function has
// the shape of conformance.Harness.Fallback: it returns ok == false (and
// logs why) when there is no Docker engine or the server does not start, so
// that the harness skips, or fails where PLENUM_REQUIRE names the database.
// A server started here is removed when the calling test ends.
package testdb

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/modules/cockroachdb"
	"github.com/testcontainers/testcontainers-go/modules/mariadb"
	"github.com/testcontainers/testcontainers-go/modules/mysql"
	"github.com/testcontainers/testcontainers-go/modules/postgres"
	"github.com/testcontainers/testcontainers-go/wait"
)

// Images are the server images the functions start. Each can be replaced
// with an environment variable (PLENUM_TESTDB_<NAME>_IMAGE) to test another
// version.
const (
	PostgresImage  = "postgres:15-alpine"
	MySQLImage     = "mysql:8.4"
	MariaDBImage   = "mariadb:10.11"
	CockroachImage = "cockroachdb/cockroach:v24.3.5"
	OracleImage    = "gvenzl/oracle-free:23-slim-faststart"
)

// DisableEnv, when set to any non-empty value, keeps testdb from trying
// Docker at all.
const DisableEnv = "PLENUM_TESTDB_DISABLE"

const startTimeout = 5 * time.Minute

var (
	dockerOnce   sync.Once
	dockerReason string // empty when a Docker engine answered
)

// Docker reports whether a Docker engine answers, and if not, why. The
// answer is found once per process.
func Docker() (ok bool, reason string) {
	dockerOnce.Do(func() {
		if os.Getenv(DisableEnv) != "" {
			dockerReason = DisableEnv + " is set"
			return
		}
		dockerReason = probeDocker()
	})
	return dockerReason == "", dockerReason
}

func probeDocker() (reason string) {
	// testcontainers panics when it finds no Docker configuration at all.
	defer func() {
		if r := recover(); r != nil {
			reason = fmt.Sprintf("no Docker engine: %v", r)
		}
	}()
	provider, err := testcontainers.ProviderDefault.GetProvider()
	if err != nil {
		return "no Docker engine: " + err.Error()
	}
	defer provider.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := provider.Health(ctx); err != nil {
		return "no Docker engine: " + err.Error()
	}
	return ""
}

// image returns the image to start for name: the environment's choice, or
// def.
func image(name, def string) string {
	if v := strings.TrimSpace(os.Getenv("PLENUM_TESTDB_" + name + "_IMAGE")); v != "" {
		return v
	}
	return def
}

// start runs one server and returns its DSN, or ok == false with the reason
// logged.
func start(t testing.TB, what string, run func(ctx context.Context) (testcontainers.Container, string, error)) (string, bool) {
	t.Helper()
	if ok, reason := Docker(); !ok {
		t.Logf("testdb: not starting %s: %s", what, reason)
		return "", false
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	ctr, dsn, err := run(ctx)
	if ctr != nil {
		testcontainers.CleanupContainer(t, ctr)
	}
	if err != nil {
		t.Logf("testdb: %s did not start: %v", what, err)
		return "", false
	}
	t.Logf("testdb: started %s", what)
	return dsn, true
}

// Postgres starts a PostgreSQL server and returns a pgx DSN for it.
func Postgres(t testing.TB) (string, bool) {
	t.Helper()
	img := image("POSTGRES", PostgresImage)
	return start(t, img, func(ctx context.Context) (testcontainers.Container, string, error) {
		ctr, err := postgres.Run(ctx, img,
			postgres.WithDatabase("plenum"), postgres.WithUsername("plenum"), postgres.WithPassword("plenum"),
			postgres.BasicWaitStrategies())
		if err != nil {
			return ctr, "", err
		}
		dsn, err := ctr.ConnectionString(ctx, "sslmode=disable")
		return ctr, dsn, err
	})
}

// Cockroach starts a single-node CockroachDB in insecure mode and returns a
// pgx DSN for it.
func Cockroach(t testing.TB) (string, bool) {
	t.Helper()
	img := image("COCKROACH", CockroachImage)
	return start(t, img, func(ctx context.Context) (testcontainers.Container, string, error) {
		ctr, err := cockroachdb.Run(ctx, img, cockroachdb.WithInsecure(), cockroachdb.WithDatabase("plenum"))
		if err != nil {
			return ctr, "", err
		}
		dsn, err := ctr.ConnectionString(ctx)
		return ctr, dsn, err
	})
}

// MySQL starts a MySQL 8 server and returns a go-sql-driver/mysql DSN for
// it (without parameters: the dialect's DSN helper adds its own).
func MySQL(t testing.TB) (string, bool) {
	t.Helper()
	img := image("MYSQL", MySQLImage)
	return start(t, img, func(ctx context.Context) (testcontainers.Container, string, error) {
		ctr, err := mysql.Run(ctx, img,
			mysql.WithDatabase("plenum"), mysql.WithUsername("root"), mysql.WithPassword("plenum"))
		if err != nil {
			return ctr, "", err
		}
		dsn, err := ctr.ConnectionString(ctx)
		return ctr, dsn, err
	})
}

// MariaDB starts a MariaDB server and returns a go-sql-driver/mysql DSN for
// it (without parameters).
func MariaDB(t testing.TB) (string, bool) {
	t.Helper()
	img := image("MARIADB", MariaDBImage)
	return start(t, img, func(ctx context.Context) (testcontainers.Container, string, error) {
		ctr, err := mariadb.Run(ctx, img,
			mariadb.WithDatabase("plenum"), mariadb.WithUsername("root"), mariadb.WithPassword("plenum"))
		if err != nil {
			return ctr, "", err
		}
		dsn, err := ctr.ConnectionString(ctx)
		return ctr, dsn, err
	})
}

// Oracle starts Oracle Database Free (23ai) from the gvenzl/oracle-free
// image, a generic container (testcontainers has no Oracle module), and
// returns a go-ora DSN for its application user on FREEPDB1. An init
// script, run by SYS after the user is created, grants it EXECUTE on
// DBMS_LOCK, which the dialect's migration lock needs.
func Oracle(t testing.TB) (string, bool) {
	t.Helper()
	img := image("ORACLE", OracleImage)
	return start(t, img, func(ctx context.Context) (testcontainers.Container, string, error) {
		ctr, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{
			ContainerRequest: testcontainers.ContainerRequest{
				Image:        img,
				ExposedPorts: []string{"1521/tcp"},
				Env: map[string]string{
					"ORACLE_PASSWORD":   "plenum",
					"APP_USER":          "plenum",
					"APP_USER_PASSWORD": "plenum",
				},
				Files: []testcontainers.ContainerFile{{
					Reader:            strings.NewReader("ALTER SESSION SET CONTAINER = FREEPDB1;\nGRANT EXECUTE ON SYS.DBMS_LOCK TO plenum;\n"),
					ContainerFilePath: "/container-entrypoint-initdb.d/plenum.sql",
					FileMode:          0o644,
				}},
				WaitingFor: wait.ForLog("DATABASE IS READY TO USE!").WithStartupTimeout(startTimeout),
			},
			Started: true,
		})
		if err != nil {
			return ctr, "", err
		}
		host, err := ctr.Host(ctx)
		if err != nil {
			return ctr, "", err
		}
		port, err := ctr.MappedPort(ctx, "1521/tcp")
		if err != nil {
			return ctr, "", err
		}
		return ctr, "oracle://plenum:plenum@" + host + ":" + port.Port() + "/FREEPDB1", nil
	})
}
