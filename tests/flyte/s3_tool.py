"""boto3 helper for the flyte integration tests (an independent S3 client).

  s3_tool.py make-bucket BUCKET
  s3_tool.py verify LOCAL_DIR BUCKET PREFIX NAME...   every file of LOCAL_DIR/NAME is at PREFIX/NAME with identical bytes
  s3_tool.py has BUCKET KEY                          the object exists
  s3_tool.py corrupt BUCKET KEY                      replace the object with other bytes of the same size
Endpoint and credentials from the AWS_* environment variables."""
import os
import sys

import boto3


def client():
    return boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"], region_name=os.environ["AWS_REGION"])


def main(argv):
    s3 = client()
    cmd = argv[1]
    if cmd == "make-bucket":
        s3.create_bucket(Bucket=argv[2])
    elif cmd == "verify":
        local, bucket, prefix, names = argv[2], argv[3], argv[4], argv[5:]
        count = 0
        for name in names:
            root = os.path.join(local, name)
            files = [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs]
            if not files:
                sys.exit(f"nothing to compare under {root}")
            for path in files:
                key = f"{prefix}/{name}/{os.path.relpath(path, root)}"
                body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
                with open(path, "rb") as f:
                    if f.read() != body:
                        sys.exit(f"s3://{bucket}/{key} differs from {path}")
                count += 1
            s3.head_object(Bucket=bucket, Key=f"{prefix}/{name}/trainhook_manifest.json")
        print(f"verified {count} files")
    elif cmd == "has":
        s3.head_object(Bucket=argv[2], Key=argv[3])
    elif cmd == "corrupt":
        body = s3.get_object(Bucket=argv[2], Key=argv[3])["Body"].read()
        s3.put_object(Bucket=argv[2], Key=argv[3], Body=bytes(b ^ 0x5A for b in body))
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main(sys.argv)
